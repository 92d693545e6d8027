"""Offline calibration of the intervention gate on base rollouts (problems disjoint from evaluation).

The pooled per-token signals of the base model's own greedy rollouts give, for each budget r,
tau = quantile_{1-r}(s) and lambda = E[s | s > tau] / E[s] (see gate.calibrate).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.disagreement.divergences import SIGNALS
from backend.disagreement.gate import Threshold, calibrate
from backend.disagreement.pair import Pair
from backend.disagreement.rollout import ProblemSet
from backend.disagreement.scoring import RolloutConfig, rollouts
from backend.errors import UserError
from backend.progress import Progress, silent


@dataclass(frozen=True)
class GateConfig:
    signal: str = "ce"  # the guided policy's signal (both models every step)
    window: int = 8  # W: previous tokens the local mean is taken over (0: threshold only, no spike rule)
    early: str = "partial"  # rule for steps t < W (gate.EARLY_RULES)

    def check(self) -> None:
        from backend.disagreement.gate import EARLY_RULES

        if self.signal not in SIGNALS:
            raise UserError(f"Unknown gate signal {self.signal!r}; choose one of {', '.join(SIGNALS)}.")
        if self.window < 0:
            raise UserError("The gate window must be 0 (threshold only) or more tokens.")
        if self.early not in EARLY_RULES:
            raise UserError(f"Unknown early-step rule {self.early!r}; choose one of {', '.join(EARLY_RULES)}.")


@dataclass(frozen=True)
class CalibrationConfig:
    problems: ProblemSet = ProblemSet(n=32, split="train", seed=1)
    max_new_tokens: int = 96


@dataclass(frozen=True)
class Calibration:
    n_rollouts: int
    signals: dict[str, np.ndarray]  # signal -> pooled values over all base-rollout tokens [N]

    def threshold(self, signal: str, budget: float) -> Threshold:
        return calibrate(self.signals[signal], budget)


def calibration(pair: Pair, config: CalibrationConfig, progress: Progress = silent) -> Calibration:
    """Pool every signal over the (cached) base rollouts of the calibration problems."""
    batch = rollouts(pair, RolloutConfig(config.problems, "base", config.max_new_tokens), progress).value
    pooled = {name: np.concatenate([r.signals[name] for r in batch.rollouts]) for name in SIGNALS}
    return Calibration(len(batch.rollouts), pooled)
