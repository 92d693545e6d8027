"""Particle weights: normalisation, effective sample size and resampling schemes (all in log space).

`ess(log_w) = 1 / sum(w_norm^2)` lies in [1, N]. A resampler maps log weights `[N]` to ancestor
indices `[N]` (row i of the new population copies row index[i] of the old one). Systematic
resampling draws one uniform u0 in [0, 1/N) and takes the points u0 + i/N through the CDF, so
a particle of normalised weight w gets floor(N w) or ceil(N w) copies (low variance).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch

Resampler = Callable[[torch.Tensor, torch.Generator], torch.Tensor]


def normalise(log_w: torch.Tensor) -> torch.Tensor:
    """Normalised weights `[N]` (sum 1) from unnormalised log weights `[N]`."""
    return torch.softmax(log_w.double(), dim=0)


def ess(log_w: torch.Tensor) -> float:
    """Effective sample size 1 / sum(w_norm^2), in [1, N]."""
    w = normalise(log_w)
    return float(1.0 / (w * w).sum())


def systematic(log_w: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Ancestor indices `[N]` by systematic resampling; sorted ascending."""
    return systematic_at(log_w, float(torch.rand((), generator=generator, dtype=torch.float64)))


def systematic_at(log_w: torch.Tensor, u: float) -> torch.Tensor:
    """Systematic resampling for a given uniform u in [0, 1): points (u + i) / N through the CDF."""
    n = log_w.shape[0]
    cdf = torch.cumsum(normalise(log_w), dim=0)
    cdf[-1] = 1.0  # guard the last bin against round-off below 1
    points = (u + torch.arange(n, dtype=torch.float64)) / n
    return torch.searchsorted(cdf, points, right=True).clamp_(max=n - 1)


def multinomial(log_w: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Ancestor indices `[N]` drawn i.i.d. from the normalised weights (the high-variance baseline)."""
    n = log_w.shape[0]
    return torch.multinomial(normalise(log_w).float(), n, replacement=True, generator=generator).sort().values


RESAMPLERS: dict[str, Resampler] = {"systematic": systematic, "multinomial": multinomial}


def reset_weights(log_w: torch.Tensor) -> torch.Tensor:
    """Log weights after resampling: all equal to logsumexp(log_w) - log N, so the evidence estimate
    (the mean weight) is kept and independent runs can later be pooled by their final weights."""
    n = log_w.shape[0]
    return torch.full_like(log_w, float(torch.logsumexp(log_w, dim=0)) - math.log(n))
