"""SynthID-Text settings (keys and n-gram length as in `SynthIDTextWatermarkingConfig`) and its verdict."""
from __future__ import annotations

from dataclasses import dataclass

from backend.params import Config, param, require

# transformers' documented example keys: a public default, like hf-kgw's hashing key (choose your own to deploy)
DEFAULT_KEYS = (654, 400, 836, 123, 340, 443, 597, 160, 57)
SCORES = ("mean", "weighted_mean")


@dataclass(frozen=True)
class SynthIDConfig(Config):
    keys: tuple[int, ...] = param(DEFAULT_KEYS, "watermarking keys, one per tournament layer (comma-separated "
                                                "whole numbers)")
    ngram_len: int = param(5, "n-gram length: the g-values of a token are seeded by the n - 1 tokens before it",
                           ge=2, le=64)
    sampling_table_seed: int = param(0, "seed of transformers' g-value table (SynthIDTextWatermarkingConfig's)")
    score: str = param("mean", "the score the verdict uses: mean or weighted mean (more weight on the first "
                                "layers) of the g-values", choices=SCORES)
    alpha: float = param(1e-3, "'watermarked' when the score's p-value under unmarked text is at most this",
                         gt=0, lt=1)
    min_tokens: int = param(16, "fewer scored tokens: 'too short to decide'", ge=0)

    def __post_init__(self):
        super().__post_init__()
        require(len(self.keys) > 0, "keys: give at least one SynthID key.")
        require(all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k < 2**62 for k in self.keys),
                f"keys must be whole numbers between 0 and 2**62, got {list(self.keys)}.")

    def watermarking_config(self):
        """The same settings as transformers' own `SynthIDTextWatermarkingConfig` (its other defaults kept)."""
        from transformers import SynthIDTextWatermarkingConfig

        return SynthIDTextWatermarkingConfig(ngram_len=self.ngram_len, keys=list(self.keys),
                                             sampling_table_seed=self.sampling_table_seed)
