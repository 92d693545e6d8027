"""Rank-aware vs rank-agnostic concentration of the maximum attention score.

For a query-key interaction of rank r in dimension d, the tail of max |S_ij| at deviation alpha decays like
exp(-d^2 alpha^2 / (gamma r)) (rank-aware, gamma > 1) instead of exp(-d alpha^2) (rank-agnostic). The exponents
differ by d / (gamma r): for attention r = d_h, so the ratio is d / (gamma d_h). Everything in log10 space.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from backend.errors import UserError


@dataclass(frozen=True)
class ConcentrationCurves:
    """alpha `[n]`; log10 tail bounds `[n]` for both inequalities; alpha where each reaches `target_log10`."""

    d: int
    r: int
    gamma: float
    alpha: np.ndarray
    log10_rank_aware: np.ndarray
    log10_rank_agnostic: np.ndarray
    exponent_ratio: float  # d / (gamma r): how many times faster the rank-aware tail decays (in the exponent)
    target_log10: float
    alpha_rank_aware: float
    alpha_rank_agnostic: float

    @property
    def alpha_ratio(self) -> float:
        """How much smaller a deviation the rank-aware bound certifies at the same tail probability."""
        return self.alpha_rank_agnostic / self.alpha_rank_aware


def concentration_curves(d: int, r: int, gamma: float = 2.0, n_points: int = 200,
                         target_log10: float = -6.0) -> ConcentrationCurves:
    if d < 1 or r < 1 or r > d:
        raise UserError(f"Need 1 <= r <= d (got d={d}, r={r}).")
    if not gamma > 1 or not math.isfinite(gamma):
        raise UserError("gamma must be a finite number > 1 (the rank-aware constant).")
    if not target_log10 < 0 or n_points < 2:
        raise UserError("The target tail probability must be below 1 and the curve needs >= 2 points.")
    ln10 = math.log(10.0)
    aware_rate, agnostic_rate = d * d / (gamma * r), float(d)  # exponents per alpha^2
    alpha_agnostic = math.sqrt(-target_log10 * ln10 / agnostic_rate)
    alpha_aware = math.sqrt(-target_log10 * ln10 / aware_rate)
    alpha = np.linspace(0.0, 1.25 * alpha_agnostic, n_points)
    return ConcentrationCurves(d=d, r=r, gamma=gamma, alpha=alpha, log10_rank_aware=-aware_rate * alpha ** 2 / ln10,
                               log10_rank_agnostic=-agnostic_rate * alpha ** 2 / ln10,
                               exponent_ratio=aware_rate / agnostic_rate, target_log10=target_log10,
                               alpha_rank_aware=alpha_aware, alpha_rank_agnostic=alpha_agnostic)
