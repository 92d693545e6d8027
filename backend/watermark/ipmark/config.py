"""IPMark settings shared by embedding and detection (both must agree on n_bits and the weights)."""
from __future__ import annotations

from dataclasses import dataclass

from backend.params import Config, param, require


@dataclass(frozen=True)
class IPMarkConfig(Config):
    n_candidates: int = param(8, "B, candidates per sentence (ipmark): sampled per position, in one batch",
                              ge=1, le=64, hint="More candidates carry the bits more often but cost more time.")
    n_bits: int = param(6, "semantic signature: sign bits of this many public hyperplanes (6: 64 regions)",
                        ge=1, le=16)
    w_sem: float = param(0.5, "weight of the semantic bit in a sentence's score", ge=0)
    w_syn: float = param(0.5, "weight of the syntactic bit in a sentence's score", ge=0)
    quality_exponent: float = param(0.7, "candidates ranked by logprob / tokens**exponent", ge=0)
    max_same_level: int = param(3, "diversity rule: at most this many consecutive sentences of one level", ge=1)
    alpha: float = param(1e-3, "family-wise level: the model level over the models, then its user over its users",
                         gt=0, lt=1)
    min_sentences: int = param(4, "fewer usable sentences: 'too short to decide'", ge=0)

    def __post_init__(self):
        super().__post_init__()
        require(self.w_sem + self.w_syn > 0, "The bit weights w_sem and w_syn must not both be zero.")
