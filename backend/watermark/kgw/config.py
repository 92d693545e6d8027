"""KGW settings: green-list fraction gamma, logit bias delta, seeding by the previous token."""
from __future__ import annotations

from dataclasses import dataclass

from backend.params import Config, param


@dataclass(frozen=True)
class KGWConfig(Config):
    gamma: float = param(0.25, "fraction of the vocabulary that is green after each token", gt=0, lt=1)
    delta: float = param(2.0, "added to green logits while generating", ge=0)
    z_threshold: float = param(4.0, "'watermarked' at or above this z (one-sided p about 3e-5)")
    min_tokens: int = param(16, "fewer scored tokens: 'too short to decide'", ge=0)
