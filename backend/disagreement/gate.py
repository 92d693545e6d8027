"""The intervention gate: g_t = [s_t > tau and s_t > lambda * mean(s over the previous W tokens)].

tau is the (1 - r) quantile of the signal over base rollouts (budget r) and lambda = E[s | s > tau] / E[s],
so a token must be both globally rare and a local spike. The first W steps have fewer than W previous
values; EARLY_RULES makes that choice explicit. W = 0 drops the local condition (threshold only), an
ablation of the spike rule. A decisive gate also requires the two models' greedy tokens to differ: a
takeover that writes the base's own token changes nothing under greedy decoding, so it is not counted
as an intervention and spends no budget.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# rule(s_t, previous values (fewer than W), tau, lam) -> gate, for steps t < W.
EarlyRule = Callable[[float, Sequence[float], float, float], bool]


def _partial(s: float, previous: Sequence[float], tau: float, lam: float) -> bool:
    """Compare with the mean of the t values there are; at t = 0 the threshold alone decides."""
    return s > tau and (not previous or s > lam * float(np.mean(previous)))


def _threshold(s: float, previous: Sequence[float], tau: float, lam: float) -> bool:
    """No local comparison until a full window exists."""
    return s > tau


def _never(s: float, previous: Sequence[float], tau: float, lam: float) -> bool:
    """Never intervene before a full window exists."""
    return False


EARLY_RULES: dict[str, EarlyRule] = {"partial": _partial, "threshold": _threshold, "never": _never}


@dataclass(frozen=True)
class Threshold:
    """A calibrated gate: tau (nats), lambda (unitless), the budget r it was calibrated for."""

    budget: float
    tau: float
    lam: float

    @staticmethod
    def never() -> Threshold:
        return Threshold(0.0, float("inf"), 1.0)

    @staticmethod
    def always() -> Threshold:
        """Every step passes (tau = -inf): the reasoning model decodes alone."""
        return Threshold(1.0, float("-inf"), 0.0)

    @property
    def is_always(self) -> bool:
        return self.tau == float("-inf")


def calibrate(values: np.ndarray, budget: float, eligible: np.ndarray | None = None) -> Threshold:
    """tau = quantile_{1-r}(s), lambda = E[s | s > tau] / E[s] over pooled base-rollout signals `[N]`.

    eligible `[N]` bool: only these positions may fire (the decisive gate: the two greedy tokens differ
    there). tau is then the quantile of s over them that makes eligible-and-above a share r of all
    tokens; with r at or over the eligible share every eligible position fires (tau = -inf is not used,
    as it means "every step" for the gate).
    """
    if not 0.0 <= budget <= 1.0:
        raise ValueError("budget must lie in [0, 1]")
    values = np.asarray(values, dtype=np.float64)
    if budget == 0.0 or values.size == 0:
        return Threshold.never()
    pool = values
    quantile = 1.0 - budget
    if eligible is not None:
        pool = values[np.asarray(eligible, dtype=bool)]
        if pool.size == 0:
            return Threshold.never()
        quantile = max(0.0, 1.0 - budget * values.size / pool.size)
    if eligible is not None and quantile == 0.0:  # every eligible position, its smallest value included
        tau = float(np.nextafter(pool.min(), -np.inf))
    else:
        tau = float(np.quantile(pool, quantile))
    above = pool[pool > tau]
    mean = float(values.mean())
    lam = float(above.mean() / mean) if above.size and mean > 0 else 1.0
    return Threshold(budget, tau, lam)


def gate(s: float, history: Sequence[float], threshold: Threshold, window: int, early: str = "partial") -> bool:
    """Whether step t (with `history` = s over steps 0..t-1) is taken over by the reasoning model."""
    if window < 0:
        raise ValueError("window must be >= 0")
    if threshold.is_always:
        return True
    if window == 0:
        return s > threshold.tau
    if len(history) < window:
        return EARLY_RULES[early](s, list(history), threshold.tau, threshold.lam)
    return s > threshold.tau and s > threshold.lam * float(np.mean(history[-window:]))
