"""Offline calibration of the intervention gate on base rollouts (problems disjoint from evaluation).

The pooled per-token signals of the base model's own greedy rollouts give, for each budget r,
tau = quantile_{1-r}(s) and lambda = E[s | s > tau] / E[s] (see gate.calibrate).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.disagreement.divergences import SIGNALS
from backend.disagreement.gate import EARLY_RULES, Threshold, calibrate
from backend.disagreement.pair import Pair
from backend.disagreement.rollout import ProblemSet
from backend.disagreement.scoring import RolloutConfig, rollouts
from backend.params import Config, param, same_as
from backend.progress import Progress, silent


@dataclass(frozen=True)
class GateConfig(Config):
    signal: str = param("ce", "gate signal of the guided policy (both models every step)", choices=SIGNALS)
    window: int = param(8, "W: previous tokens the local mean is taken over (0: threshold only, no spike rule)",
                        ge=0)
    early: str = param("partial", "rule for the first W steps", choices=tuple(EARLY_RULES))
    capped: bool = param(False, "online budget: by step t at most max(1, r·(t+1)) tokens are taken over "
                                "(the first is always allowed), so the realised rate stays at or under r "
                                "(or one takeover) even where the calibrated gate fires more often than on "
                                "base rollouts")
    decisive: bool = param(False, "take over only where the two models' greedy tokens differ: a takeover that "
                                  "writes the base's own token changes nothing, so it is neither made nor counted, "
                                  "and τ is calibrated so that such changes are a share r of base-rollout tokens "
                                  "(the matched controls' takeovers wait for such steps too)")


@dataclass(frozen=True)
class CalibrationConfig(Config):
    problems: ProblemSet = param(ProblemSet(n=32, split="train", seed=1),
                                 "training problems the gate is calibrated on (disjoint from evaluation)")
    max_new_tokens: int = same_as(RolloutConfig, "max_new_tokens")


@dataclass(frozen=True)
class Calibration:
    n_rollouts: int
    signals: dict[str, np.ndarray]  # signal -> pooled values over all base-rollout tokens [N]

    def threshold(self, signal: str, budget: float, decisive: bool = False) -> Threshold:
        return calibrate(self.signals[signal], budget, self.signals["differs"] > 0.5 if decisive else None)


def calibration(pair: Pair, config: CalibrationConfig, progress: Progress = silent) -> Calibration:
    """Pool every signal over the (cached) base rollouts of the calibration problems."""
    batch = rollouts(pair, RolloutConfig(config.problems, "base", config.max_new_tokens), progress).value
    pooled = {name: np.concatenate([r.signals[name] for r in batch.rollouts])
              for name in (*SIGNALS.names(), "differs")}
    return Calibration(n_rollouts=len(batch.rollouts), signals=pooled)
