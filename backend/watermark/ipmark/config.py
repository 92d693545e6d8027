"""IPMark settings shared by embedding and detection (both must agree on n_bits and the weights)."""
from __future__ import annotations

from dataclasses import dataclass

from backend.errors import UserError


@dataclass(frozen=True)
class IPMarkConfig:
    n_candidates: int = 8  # B: candidate sentences sampled per position, in one batch
    n_bits: int = 6  # semantic signature: sign bits of this many public hyperplanes (64 regions)
    w_sem: float = 0.5  # score = w_sem * semantic bit + w_syn * syntactic bit
    w_syn: float = 0.5
    quality_exponent: float = 0.7  # candidates ranked by logprob / tokens**exponent
    max_same_level: int = 3  # diversity rule: no more than this many consecutive sentences of one level
    alpha: float = 1e-3  # family-wise level for "watermarked" (Bonferroni over models / users)
    min_sentences: int = 4  # fewer usable sentences: "too short to decide"

    def __post_init__(self):
        if not 1 <= self.n_candidates <= 64:
            raise UserError("The number of candidates B must be between 1 and 64.")
        if not 1 <= self.n_bits <= 16:
            raise UserError("The semantic signature takes 1 to 16 bits.")
        if self.w_sem < 0 or self.w_syn < 0 or self.w_sem + self.w_syn <= 0:
            raise UserError("The bit weights must be non-negative and not both zero.")
        if not 0 < self.alpha < 1:
            raise UserError("alpha must be between 0 and 1.")
