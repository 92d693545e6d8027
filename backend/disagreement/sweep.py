"""The budget sweep: exact-match accuracy vs intervention rate for guided decoding and its controls.

For each budget r the gate is calibrated on base rollouts of training problems; guided decoding
then runs on held-out problems, and each control takes over exactly as many tokens per problem as
guided did (random: uniformly random positions within guided's output length, seeded; early: the
first ones). The entropy-gated variant has its own threshold at the same budget.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from backend.disagreement.calibration import CalibrationConfig, GateConfig, calibration
from backend.disagreement.intervention import POLICIES, Decoded, FixedPositions, SignalGate, decode, matched_positions
from backend.disagreement.pair import Pair
from backend.disagreement.rollout import ProblemSet, answer_correct, decode_tokens, prompt_ids
from backend.disagreement.scoring import RolloutConfig, fits, rollouts
from backend.errors import UserError
from backend.progress import Progress, scaled, silent
from backend.store import Computed, cached

CODE_VERSION = "1"
SWEEP_POLICIES = ("guided", "entropy", "random", "early")


@dataclass(frozen=True)
class SweepConfig:
    problems: ProblemSet = ProblemSet(n=100)
    rates: tuple[float, ...] = (0.02, 0.05, 0.10, 0.20)  # budgets r
    policies: tuple[str, ...] = SWEEP_POLICIES
    gate: GateConfig = GateConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    max_new_tokens: int = 96
    seed: int = 0  # random control positions

    def check(self) -> None:
        self.gate.check()
        unknown = [p for p in self.policies if p not in SWEEP_POLICIES]
        if unknown:
            raise UserError(f"Unknown policies {unknown}; the sweep runs {', '.join(SWEEP_POLICIES)}.")
        if not self.rates or any(not 0 <= r <= 1 for r in self.rates):
            raise UserError("Budgets must lie between 0 and 1 (e.g. 0.05 for 5%).")


@dataclass(frozen=True)
class SweepRecord:
    problem_id: str
    policy: str
    budget: float
    correct: bool | None
    n_interventions: int
    length: int
    base_passes: int
    reasoning_passes: int


@dataclass(frozen=True)
class SweepPoint:
    policy: str
    budget: float
    accuracy: float
    rate: float  # realised: interventions / generated tokens, pooled over problems
    mean_length: float
    tau: float  # NaN for the controls
    lam: float


@dataclass(frozen=True)
class SweepResult:
    n_problems: int
    base_accuracy: float
    reasoning_accuracy: float
    points: tuple[SweepPoint, ...]
    records: tuple[SweepRecord, ...]
    skipped: tuple[str, ...]


def policy_for(name: str, gate: GateConfig, cal, budget: float, count: int = 0, length: int = 0,
               rng: np.random.Generator | None = None):
    """A fresh policy object (they keep per-sequence state) for one problem."""
    if name == "guided":
        return SignalGate(gate.signal, cal.threshold(gate.signal, budget), gate.window, gate.early)
    if name == "entropy":
        return SignalGate("entropy_base", cal.threshold("entropy_base", budget), gate.window, gate.early)
    if name in ("random", "early"):
        return FixedPositions(matched_positions(name, count, length, rng or np.random.default_rng(0)))
    if name == "base":
        return FixedPositions(frozenset())
    if name == "reasoning":
        return FixedPositions(frozenset(), every=True)
    raise UserError(f"Unknown policy {name!r}; known: {', '.join(POLICIES)}.")


def _summarise(policy: str, budget: float, decoded: list[Decoded], correct: list[bool | None], threshold) -> SweepPoint:
    tokens = sum(len(d.token_ids) for d in decoded)
    scored = [c for c in correct if c is not None]
    return SweepPoint(policy, budget, float(np.mean(scored)) if scored else float("nan"),
                      sum(d.n_interventions for d in decoded) / tokens if tokens else 0.0,
                      tokens / len(decoded) if decoded else 0.0,
                      threshold.tau if threshold else float("nan"), threshold.lam if threshold else float("nan"))


@dataclass(frozen=True)
class PointConfig:
    """One (policy, budget) cell of the sweep; cached on its own so a long sweep resumes cell by cell."""

    problems: ProblemSet
    policy: str
    budget: float
    gate: GateConfig
    calibration: CalibrationConfig
    max_new_tokens: int
    seed: int


@dataclass(frozen=True)
class PointResult:
    point: SweepPoint
    records: tuple[SweepRecord, ...]


def sweep_point(pair: Pair, config: PointConfig, progress: Progress = silent) -> Computed[PointResult]:
    def compute() -> PointResult:
        cal = calibration(pair, config.calibration, scaled(progress, 0.0, 0.1))
        guided: dict[str, SweepRecord] = {}
        if config.policy in ("random", "early"):  # controls match guided's per-problem takeover count
            ref = replace(config, policy="guided")
            guided = {r.problem_id: r for r in sweep_point(pair, ref, scaled(progress, 0.1, 0.5)).value.records}
        problems = [p for p in config.problems.problems() if fits(pair, p)]
        decoded, correct, records = [], [], []
        for i, problem in enumerate(problems):
            progress(0.5 + 0.5 * i / len(problems), f"{config.policy} at r={config.budget:.0%}: "
                                                    f"problem {i + 1}/{len(problems)}")
            ref_record = guided.get(problem.id)
            pol = policy_for(config.policy, config.gate, cal, config.budget,
                             ref_record.n_interventions if ref_record else 0, ref_record.length if ref_record else 0,
                             np.random.default_rng([config.seed, int(round(config.budget * 1e6)), i]))
            out = decode(pair, prompt_ids(pair.base, problem), pol, config.max_new_tokens)
            ok = answer_correct(problem, decode_tokens(pair.base, list(out.token_ids))[0])
            decoded.append(out)
            correct.append(ok)
            records.append(SweepRecord(problem.id, config.policy, config.budget, ok, out.n_interventions,
                                       len(out.token_ids), out.base_passes, out.reasoning_passes))
        threshold = getattr(pol, "threshold", None) if problems else None
        return PointResult(_summarise(config.policy, config.budget, decoded, correct, threshold), tuple(records))

    return cached("disagreement", "sweep-point", pair.ref, config, compute, code_version=CODE_VERSION)


def sweep(pair: Pair, config: SweepConfig, progress: Progress = silent) -> Computed[SweepResult]:
    """Reference accuracies (base and reasoning alone) and every (policy, budget) cell."""
    config.check()

    def compute() -> SweepResult:
        refs = [rollouts(pair, RolloutConfig(config.problems, source, config.max_new_tokens),
                         scaled(progress, 0.1 * i, 0.1 * (i + 1))).value for i, source in enumerate(("base", "reasoning"))]
        cells = [(budget, policy) for budget in config.rates for policy in SWEEP_POLICIES if policy in config.policies]
        points, records = [], []
        for j, (budget, policy) in enumerate(cells):
            cell = PointConfig(config.problems, policy, budget, config.gate, config.calibration,
                               config.max_new_tokens, config.seed)
            result = sweep_point(pair, cell, scaled(progress, 0.2 + 0.8 * j / len(cells),
                                                    0.2 + 0.8 * (j + 1) / len(cells))).value
            points.append(result.point)
            records.extend(result.records)
        progress(1.0, "sweep done")
        return SweepResult(len(refs[0].rollouts), refs[0].accuracy, refs[1].accuracy, tuple(points),
                           tuple(records), refs[0].skipped)

    return cached("disagreement", "sweep", pair.ref, config, compute, code_version=CODE_VERSION)
