"""SynthID-Text detection by the g-value score, with its p-value under unmarked text.

g-values: transformers' SynthID processor's own `compute_g_values` on the text's ids (one bit per token and key:
a table lookup at a hash of the n-gram ending at the token and the key), masked as the library's examples do:
contexts seen before in the text (`compute_context_repetition_mask`) and everything from the first EOS on
(`compute_eos_token_mask`). The first n - 1 tokens have no full context and are not scored.

Scores (the SynthID paper's mean and weighted-mean detectors): mean = ones / (n depth); weighted mean weights layer
l by linspace(10, 1, depth), normalised to sum to depth, so its expectation equals the mean's.

Null distribution (text written without these keys): every unmasked g-value is a lookup at a distinct hash (the
contexts are unrepeated, the keys differ), so the bits are independent draws from the g-value table, each 1 with
probability pi = the table's exact share of ones (about 1/2; read from the processor). Hence
- mean: ones ~ Binomial(n depth, pi): the p-value is the exact binomial tail;
- weighted mean: a weighted sum of those bits, with mean pi and variance pi (1 - pi) sum(w^2) / (depth^2 n):
  the p-value is its normal approximation (stated as such).
Hash collisions modulo the table size (2^16 entries) make a few lookups share a bit; at 1,000 scored g-values
they add about 1,000 / 65,536 = 1.5% to the variance, which these p-values ignore.
"""
from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

import torch

from backend.errors import UserError
from backend.models.loading import ModelHandle
from backend.models.rules import stop_ids
from backend.watermark.library import text_config, text_ids
from backend.watermark.methods import CLEAN, TOO_SHORT, WATERMARKED
from backend.watermark.synthid.config import SynthIDConfig


@dataclass(frozen=True)
class ScoreTest:
    name: str  # "mean" | "weighted_mean"
    score: float
    expected: float
    std: float
    z: float
    p_value: float
    null: str  # how the p-value was obtained


@dataclass(frozen=True)
class SynthIDReport:
    verdict: str
    mean: ScoreTest | None  # None when no token could be scored
    weighted: ScoreTest | None
    chosen: str  # the score the verdict uses
    n_tokens: int  # unmasked tokens scored
    depth: int
    table_ones: float  # pi
    tokens: tuple[tuple[str, int, int], ...]  # (token text, ones among its g-values or -1 if not scored, depth)
    config: SynthIDConfig

    @property
    def test(self) -> ScoreTest | None:
        return self.mean if self.chosen == "mean" else self.weighted

    @property
    def detection_score(self) -> float:
        return 0.0 if self.test is None else self.test.z

    def summary(self) -> dict:
        t = lambda s: None if s is None else {"score": round(s.score, 5), "z": round(s.z, 4),  # noqa: E731
                                              "p_value": s.p_value, "null": s.null}
        c = self.config
        return {"score_used": self.chosen, "mean": t(self.mean), "weighted_mean": t(self.weighted),
                "tokens_scored": self.n_tokens, "g_values_per_token": self.depth,
                "table_share_of_ones": self.table_ones,
                "settings": {"keys": list(c.keys), "ngram_len": c.ngram_len,
                             "sampling_table_seed": c.sampling_table_seed, "alpha": c.alpha}}

    def to_json(self) -> dict:
        return {**self.summary(), "tokens": [list(x) for x in self.tokens]}


_processors: dict[tuple, object] = {}


def processor_for(handle: ModelHandle, cfg: SynthIDConfig):
    """transformers' SynthID processor for these settings (its g-value table is built once per settings)."""
    key = (text_config(handle).vocab_size, str(handle.model.device), cfg.keys, cfg.ngram_len, cfg.sampling_table_seed)
    if key not in _processors:
        _processors[key] = cfg.watermarking_config().construct_processor(key[0], handle.model.device)
    return _processors[key]


def layer_weights(depth: int) -> torch.Tensor:
    w = torch.linspace(10, 1, depth, dtype=torch.float64)
    return w * depth / w.sum()


def g_values_and_mask(processor, ids: torch.Tensor, stops: Collection[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """g-values `[1, L - n + 1, depth]` and the mask `[1, L - n + 1]` (1: scored) of `ids` `[1, L]`: nothing from
    the first stop id (`rules.stop_ids`, a chat end-of-turn included) on is scored."""
    n = processor.ngram_len
    g = processor.compute_g_values(ids)
    mask = processor.compute_context_repetition_mask(ids).long()
    for stop in sorted(stops):  # transformers' mask takes one eos id: masked from each one's first occurrence
        mask = mask * processor.compute_eos_token_mask(ids, stop)[:, n - 1:].long()
    return g, mask


def score_tests(g: torch.Tensor, mask: torch.Tensor, pi: float) -> tuple[ScoreTest, ScoreTest]:
    """The mean and weighted-mean scores of the unmasked g-values (g [T, depth], mask [T]) and their p-values."""
    from scipy.stats import binom, norm  # here: scipy.stats costs every process that loads the features ~0.5 s

    kept = g[mask.bool()].double()  # [n, depth]
    n, depth = kept.shape
    ones = int(kept.sum())
    total = n * depth
    sd = math.sqrt(pi * (1 - pi) / total)
    mean_score = ones / total
    mean = ScoreTest(name="mean", score=mean_score, expected=pi, std=sd, z=(mean_score - pi) / sd,
                     p_value=float(binom.sf(ones - 1, total, pi)), null="exact binomial tail")
    w = layer_weights(depth)
    weighted_score = float((kept * w).sum() / total)
    w_sd = math.sqrt(pi * (1 - pi) * float((w ** 2).sum()) / (depth ** 2 * n))
    z = (weighted_score - pi) / w_sd
    weighted = ScoreTest(name="weighted_mean", score=weighted_score, expected=pi, std=w_sd, z=z,
                         p_value=float(norm.sf(z)), null="normal approximation")
    return mean, weighted


def detect(handle: ModelHandle, text: str, cfg: SynthIDConfig = SynthIDConfig()) -> SynthIDReport:
    ids = text_ids(handle, text)
    if len(ids) < cfg.ngram_len:
        raise UserError(f"ngram_len ({cfg.ngram_len}) is longer than the text ({len(ids)} tokens under "
                        f"{handle.display_name}'s tokenizer): no n-gram to score.")
    processor = processor_for(handle, cfg)
    tensor = torch.tensor([ids], dtype=torch.long, device=handle.model.device)
    g, mask = g_values_and_mask(processor, tensor, stop_ids(handle))
    g, mask = g[0].cpu(), mask[0].cpu()
    depth = g.shape[-1]
    pi = float(processor.sampling_table.double().mean())
    n = int(mask.sum())
    mean, weighted = score_tests(g, mask, pi) if n else (None, None)
    chosen = mean if cfg.score == "mean" else weighted
    if n < max(cfg.min_tokens, 1):
        verdict = TOO_SHORT
    else:
        verdict = WATERMARKED if chosen.p_value <= cfg.alpha else CLEAN
    skip = cfg.ngram_len - 1
    ones = [-1] * skip + [int(g[i].sum()) if mask[i] else -1 for i in range(g.shape[0])]
    tokens = tuple((handle.tokenizer.decode([t]), o, depth) for t, o in zip(ids, ones))
    return SynthIDReport(verdict=verdict, mean=mean, weighted=weighted, chosen=cfg.score, n_tokens=n, depth=depth,
                         table_ones=pi, tokens=tokens, config=cfg)
