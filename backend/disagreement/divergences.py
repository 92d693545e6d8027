"""Per-token divergences between two next-token distributions on the same prefix.

All inputs are log-probabilities `[T, V]` (fp32, log_softmax of logits); all outputs are `[T]` in nats.
Terms with p = 0 contribute 0 (the 0 * log 0 = 0 convention), so hand-made distributions with zeros work.
"""
from __future__ import annotations

import math

import torch

# name -> what it measures; every gate signal and every plotted curve is one of these keys.
SIGNALS: dict[str, str] = {
    "ce": "cross-entropy CE(p_base, p_reason) = -sum p_base log p_reason",
    "kl_base_reason": "KL(p_base || p_reason)",
    "kl_reason_base": "KL(p_reason || p_base)",
    "js": "Jensen-Shannon divergence (natural log, at most log 2)",
    "entropy_base": "entropy of the base distribution",
    "entropy_reason": "entropy of the reasoning distribution",
}
DIVERGENCES = ("ce", "kl_base_reason", "kl_reason_base", "js")


def log_probs(logits: torch.Tensor) -> torch.Tensor:
    """Logits `[..., V]` -> fp32 log-probabilities."""
    return torch.log_softmax(logits.float(), dim=-1)


def _plogq(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """sum_v p(v) log q(v) over the last axis, with 0 where p(v) = 0."""
    p = logp.exp()
    return torch.where(p > 0, p * logq, torch.zeros_like(p)).sum(-1)


def entropy(logp: torch.Tensor) -> torch.Tensor:
    return -_plogq(logp, logp)


def cross_entropy(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """-sum p log q."""
    return -_plogq(logp, logq)


def kl(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """KL(p || q) = sum p (log p - log q)."""
    return _plogq(logp, logp) - _plogq(logp, logq)


def js(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    logm = torch.logaddexp(logp, logq) - math.log(2.0)
    return 0.5 * kl(logp, logm) + 0.5 * kl(logq, logm)


def token_divergences(logp_base: torch.Tensor, logp_reason: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every signal of SIGNALS for each position: `{name: [T]}`."""
    h_base, h_reason = entropy(logp_base), entropy(logp_reason)
    ce = cross_entropy(logp_base, logp_reason)
    return {
        "ce": ce,
        "kl_base_reason": (ce - h_base).clamp_min(0.0),  # CE = KL + H; clamp rounding below zero
        "kl_reason_base": kl(logp_reason, logp_base).clamp_min(0.0),
        "js": js(logp_base, logp_reason).clamp_min(0.0),
        "entropy_base": h_base,
        "entropy_reason": h_reason,
    }


def signal_value(name: str, logp_base: torch.Tensor, logp_reason: torch.Tensor | None) -> torch.Tensor:
    """One signal `[T]`; base entropy needs no reasoning distribution (the cheap gate)."""
    if name not in SIGNALS:
        raise KeyError(f"unknown signal {name!r}; known: {', '.join(SIGNALS)}")
    if name == "entropy_base":
        return entropy(logp_base)
    if logp_reason is None:
        raise ValueError(f"signal {name!r} needs the reasoning model's distribution")
    if name == "ce":
        return cross_entropy(logp_base, logp_reason)
    return token_divergences(logp_base, logp_reason)[name]
