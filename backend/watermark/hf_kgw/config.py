"""Settings of transformers' KGW watermark (the defaults are `WatermarkingConfig`'s) and of its verdict."""
from __future__ import annotations

from dataclasses import dataclass

from backend.params import Config, param

SEEDING_SCHEMES = ("lefthash", "selfhash")


@dataclass(frozen=True)
class HFKGWConfig(Config):
    greenlist_ratio: float = param(0.25, "fraction of the vocabulary that is green after each context", gt=0, lt=1)
    bias: float = param(2.0, "added to green logits while generating", ge=0)
    hashing_key: int = param(15485863, "hashing key (transformers' public default: the millionth prime)", ge=0,
                             le=2**53 - 1)  # what a page's number input can hold
    seeding_scheme: str = param("lefthash", "lefthash: green list seeded by the previous token; selfhash: also by "
                                "the token itself", choices=SEEDING_SCHEMES)
    context_width: int = param(1, "previous tokens the seed reads", ge=1, le=64)
    z_threshold: float = param(4.0, "'watermarked' above this z (WatermarkDetector's prediction at this threshold; "
                                    "one-sided p about 3e-5)")
    min_tokens: int = param(16, "fewer scored tokens: 'too short to decide'", ge=0)

    def watermarking_config(self):
        """The same settings as transformers' own `WatermarkingConfig`."""
        from transformers import WatermarkingConfig

        return WatermarkingConfig(greenlist_ratio=self.greenlist_ratio, bias=self.bias, hashing_key=self.hashing_key,
                                  seeding_scheme=self.seeding_scheme, context_width=self.context_width)
