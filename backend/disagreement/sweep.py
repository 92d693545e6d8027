"""The budget sweep: exact-match accuracy vs intervention rate for guided decoding and its controls.

For each budget r the gate is calibrated on base rollouts of training problems; guided decoding
then runs on held-out problems, and each control takes over exactly as many tokens per problem as
guided did (random: uniformly random positions within guided's output length, seeded; early: the
first ones). The entropy-gated variant has its own threshold at the same budget. All cells of one
problem decode together as rows of one batch (backend.disagreement.batched).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

import backend.disagreement.batched as batched
from backend.disagreement.calibration import Calibration, CalibrationConfig, GateConfig, calibration
from backend.disagreement.batched import take_over_rows
from backend.disagreement.guided import TAKEOVER_READS, InterveneConfig
from backend.disagreement.pair import Pair, pair_verb
from backend.disagreement.policies import MATCHED_TO, POLICIES, policy_for, sweep_policies
from backend.disagreement.rollout import ProblemSet, answer_correct, decode_tokens, prompt_ids
from backend.disagreement.scoring import RolloutConfig, fitting, rollouts
from backend.params import Config, param, require, same_as
from backend.progress import Partial, Progress, report_partial, scaled, silent, wants_partials
from backend.store import Stored
from backend.tasks.arithmetic import Problem
from backend.verbs import Verb


@dataclass(frozen=True)
class SweepConfig(Config):
    problems: ProblemSet = param(ProblemSet(n=100), "held-out problems")
    rates: tuple[float, ...] = param((0.02, 0.05, 0.10, 0.20), "budgets r (share of tokens)")
    policies: tuple[str, ...] = param(sweep_policies(), "policies run at every budget")
    gate: GateConfig = GateConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    max_new_tokens: int = same_as(RolloutConfig, "max_new_tokens")
    seed: int = same_as(InterveneConfig, "seed")

    def __post_init__(self) -> None:
        super().__post_init__()
        known = sweep_policies()
        unknown = [p for p in self.policies if p not in known]
        require(not unknown, f"Unknown policies {unknown}; the sweep runs {', '.join(known)}.")
        require(bool(self.rates) and all(0 <= r <= 1 for r in self.rates),
                "Budgets must lie between 0 and 1 (e.g. 0.05 for 5%).")


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
    points: tuple[SweepPoint, ...]  # one per (budget, policy) cell, budget-major
    records: tuple[SweepRecord, ...]
    skipped: tuple[str, ...]  # ids of the problems the context rule left out
    # share of the reasoning model's own greedy tokens that the base would have written otherwise: the rate at
    # which a decisive gate that fires at every such step reproduces the reasoning model (NaN: not recorded)
    reasoning_differs: float = float("nan")


@dataclass(frozen=True)
class ProblemCells:
    """Every (policy, budget) cell of the sweep on one problem; cached per problem, so a long sweep resumes."""

    problem: Problem
    rates: tuple[float, ...]
    policies: tuple[str, ...]
    gate: GateConfig
    calibration: CalibrationConfig
    max_new_tokens: int
    seed: int
    index: int  # the problem's position in its set (seeds the random control)


@dataclass(frozen=True)
class CellsRequest:
    """One problem's cells and the gate's calibration they run with (derived from `cells.calibration`, so the
    store keys on the cells alone)."""

    cells: ProblemCells
    calibration: Calibration


def _cells_key(pair: Pair, request: CellsRequest) -> ProblemCells:
    return request.cells


def compute_cells(pair: Pair, request: CellsRequest, progress: Progress = silent) -> tuple[SweepRecord, ...]:
    """Gated policies first (one batched run), then the controls matched to guided's counts (a second one)."""
    config, cal = request.cells, request.calibration
    prompt = prompt_ids(pair.base, config.problem)
    asked = [POLICIES.get(p) for p in sweep_policies() if p in config.policies]
    controls = [(s.name, r) for s in asked if s.matched for r in config.rates]
    needed = {s.name for s in asked} | ({MATCHED_TO} if controls else set())  # controls copy guided's count
    gated = [(s.name, r) for s in POLICIES if s.name in needed and not s.matched for r in config.rates]
    decoded = dict(zip(gated, take_over_rows(pair, prompt, [policy_for(p, config.gate, cal, r) for p, r in gated],
                                          config.max_new_tokens)))
    policies = []
    for p, r in controls:
        ref = decoded[(MATCHED_TO, r)]
        rng = np.random.default_rng([config.seed, int(round(r * 1e6)), config.index])
        policies.append(policy_for(p, config.gate, cal, r, ref.n_interventions, len(ref.token_ids), rng))
    decoded.update(zip(controls, take_over_rows(pair, prompt, policies, config.max_new_tokens)))
    records = []
    for (p, r), out in decoded.items():
        if p not in config.policies:
            continue
        ok = answer_correct(config.problem, decode_tokens(pair.base, list(out.token_ids))[0])
        records.append(SweepRecord(problem_id=config.problem.id, policy=p, budget=r, correct=ok,
                                   n_interventions=out.n_interventions, length=len(out.token_ids),
                                   base_passes=out.base_passes, reasoning_passes=out.reasoning_passes))
    return tuple(records)


_READS = (sys.modules[__name__], batched, *TAKEOVER_READS)

sweep_cells: Verb[CellsRequest, tuple[SweepRecord, ...]] = pair_verb(
    "sweep-problem", CellsRequest, compute_cells, "every (policy, budget) cell of the sweep on one problem",
    reads=_READS, key=_cells_key)


def problem_cells(pair: Pair, config: ProblemCells, cal: Calibration) -> tuple[SweepRecord, ...]:
    """The cells of one problem, through the store (so a long sweep resumes)."""
    return sweep_cells(pair, CellsRequest(config, cal)).value


def aggregate(records: list[SweepRecord], policy: str, budget: float, threshold) -> SweepPoint:
    cell = [r for r in records if r.policy == policy and r.budget == budget]
    tokens = sum(r.length for r in cell)
    scored = [r.correct for r in cell if r.correct is not None]
    return SweepPoint(policy=policy, budget=budget, accuracy=float(np.mean(scored)) if scored else float("nan"),
                      rate=sum(r.n_interventions for r in cell) / tokens if tokens else 0.0,
                      mean_length=tokens / len(cell) if cell else 0.0,
                      tau=threshold.tau if threshold else float("nan"),
                      lam=threshold.lam if threshold else float("nan"))


def compute_sweep(pair: Pair, config: SweepConfig, progress: Progress = silent) -> SweepResult:
    """Reference accuracies (base and reasoning alone) and every (policy, budget) cell; the sweep over the problems
    finished so far is handed to the progress's watcher after each problem (the page's curve grows)."""
    refs = [rollouts(pair, RolloutConfig(config.problems, source, config.max_new_tokens),
                     scaled(progress, 0.1 * i, 0.1 * (i + 1))).value for i, source in enumerate(("base", "reasoning"))]
    cal = calibration(pair, config.calibration, scaled(progress, 0.2, 0.3))
    fit = fitting(pair, config.problems.problems(), config.max_new_tokens)  # the context rule: skip and count
    problems = fit.kept
    policies = tuple(p for p in sweep_policies() if p in config.policies)
    records: list[SweepRecord] = []
    for i, problem in enumerate(problems):
        progress(0.3 + 0.7 * i / len(problems), f"problem {i + 1}/{len(problems)}: "
                                                f"{len(policies) * len(config.rates)} cells")
        cells = ProblemCells(problem=problem, rates=config.rates, policies=policies, gate=config.gate,
                             calibration=config.calibration, max_new_tokens=config.max_new_tokens,
                             seed=config.seed, index=i)
        records.extend(problem_cells(pair, cells, cal))
        if wants_partials(progress):  # the aggregate over every cell so far: only for a watcher
            report_partial(progress, Partial(_swept(config, policies, cal, refs, records, i + 1, fit.skipped),
                                             i + 1, len(problems), "problems"))
    progress(1.0, "sweep done")
    return _swept(config, policies, cal, refs, records, len(problems), fit.skipped)


def _swept(config: SweepConfig, policies: tuple[str, ...], cal: Calibration, refs: list, records: list[SweepRecord],
           n_problems: int, skipped: tuple[str, ...]) -> SweepResult:
    """The sweep over the records of the first `n_problems` problems."""
    points = []
    for budget in config.rates:
        for policy in policies:
            threshold = getattr(policy_for(policy, config.gate, cal, budget), "threshold", None)
            points.append(aggregate(records, policy, budget, threshold))
    differs = np.concatenate([r.signals["differs"] for r in refs[1].rollouts])
    return SweepResult(n_problems=n_problems, base_accuracy=refs[0].accuracy,
                       reasoning_accuracy=refs[1].accuracy, points=tuple(points), records=tuple(records),
                       skipped=skipped, reasoning_differs=float(differs.mean()) if differs.size else float("nan"))


sweep: Verb[SweepConfig, SweepResult] = pair_verb(
    "sweep", SweepConfig, compute_sweep, "exact-match accuracy against intervention rate for guided decoding and "
    "its controls, at every budget", reads=_READS)


def latest_sweep(pair: Pair) -> Stored | None:
    """The most recent stored sweep of this pair (any settings), or None."""
    return sweep.latest(pair)
