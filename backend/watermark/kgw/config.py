"""KGW settings: green-list fraction gamma, logit bias delta, seeding by the previous token."""
from __future__ import annotations

from dataclasses import dataclass

from backend.errors import UserError


@dataclass(frozen=True)
class KGWConfig:
    gamma: float = 0.25  # fraction of the vocabulary that is green after each token
    delta: float = 2.0  # added to green logits while generating
    z_threshold: float = 4.0  # "watermarked" above this z (one-sided p about 3e-5)
    min_tokens: int = 16  # fewer scored tokens: "too short to decide"

    def __post_init__(self):
        if not 0 < self.gamma < 1:
            raise UserError("gamma must be between 0 and 1.")
        if self.delta < 0:
            raise UserError("delta must be non-negative.")
