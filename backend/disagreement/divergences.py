"""Per-token divergences between two next-token distributions on the same prefix.

All inputs are log-probabilities `[T, V]` (fp32, log_softmax of logits); all outputs are `[T]` in nats.
Terms with p = 0 contribute 0 (the 0 * log 0 = 0 convention), so hand-made distributions with zeros work.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from backend.variants import Registry, Variant

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


@dataclass(frozen=True)
class Signal(Variant):
    """A per-token signal: `run(logp_base [T, V], logp_reason [T, V] | None) -> [T]` nats.

    needs_reasoning: False only for the cheap gate (base entropy), which never queries the reasoning model
    divergence:      compares the two distributions (the page's divergence choices)
    """

    needs_reasoning: bool = True
    divergence: bool = False


# Every gate signal and every plotted curve is one of these; the stored rollouts keep one array per name.
SIGNALS: Registry[Signal] = Registry("disagreement-signals", "signal")
for _signal in (
    Signal("ce", "CE(base, reason)", "cross-entropy CE(p_base, p_reason) = -sum p_base log p_reason",
           lambda b, r: cross_entropy(b, r), divergence=True),
    # CE = KL + H: computed from the same two terms as ce; clamp rounding below zero
    Signal("kl_base_reason", "KL(base‖reason)", "KL(p_base || p_reason)",
           lambda b, r: (cross_entropy(b, r) - entropy(b)).clamp_min(0.0), divergence=True),
    Signal("kl_reason_base", "KL(reason‖base)", "KL(p_reason || p_base)",
           lambda b, r: kl(r, b).clamp_min(0.0), divergence=True),
    Signal("js", "JS", "Jensen-Shannon divergence (natural log, at most log 2)",
           lambda b, r: js(b, r).clamp_min(0.0), divergence=True),
    Signal("entropy_base", "H(base)", "entropy of the base distribution", lambda b, r: entropy(b),
           needs_reasoning=False),
    Signal("entropy_reason", "H(reason)", "entropy of the reasoning distribution", lambda b, r: entropy(r)),
):
    SIGNALS.register(_signal)
DIVERGENCES = tuple(s.name for s in SIGNALS if s.divergence)


def token_divergences(logp_base: torch.Tensor, logp_reason: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every signal for each position: `{name: [T]}`."""
    return {s.name: s.run(logp_base, logp_reason) for s in SIGNALS}


def signal_value(name: str, logp_base: torch.Tensor, logp_reason: torch.Tensor | None) -> torch.Tensor:
    """One signal `[T]`; base entropy needs no reasoning distribution (the cheap gate)."""
    signal = SIGNALS.get(name)
    if signal.needs_reasoning and logp_reason is None:
        raise ValueError(f"signal {name!r} needs the reasoning model's distribution")
    return signal.run(logp_base, logp_reason)
