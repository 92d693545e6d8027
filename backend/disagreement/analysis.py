"""The two analysis verbs: one problem traced token by token, and a batch's concentration and failure study."""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import torch

import backend.disagreement.categories as categories
import backend.disagreement.concentration as concentration_module
import backend.disagreement.divergences as divergences
import backend.disagreement.failure as failure_module
import backend.disagreement.rollout as rollout_module
import backend.disagreement.scoring as scoring
from backend.disagreement.categories import categorize
from backend.disagreement.concentration import Concentration, concentration
from backend.disagreement.divergences import DIVERGENCES
from backend.disagreement.eopd import EopdParams, at_temperature, eopd_signals
from backend.disagreement.failure import FailurePrediction, predict_failures
from backend.disagreement.pair import Pair, pair_verb
from backend.disagreement.rollout import ProblemSet, prompt_ids, rollout_logprobs, typed_problem
from backend.disagreement.scoring import RolloutConfig, ScoredRollout, generate_one, rollouts
from backend.errors import UserError
from backend.models.rules import special_ids
from backend.params import Config, param, require, same_as
from backend.progress import Progress, scaled, silent
from backend.tasks.arithmetic import Problem
from backend.verbs import Verb


@dataclass(frozen=True)
class TraceConfig(Config):
    question: str
    answer: int | None = None  # None: the rollouts are not scored
    max_new_tokens: int = same_as(RolloutConfig, "max_new_tokens")
    eopd: EopdParams = EopdParams()

    def __post_init__(self) -> None:
        super().__post_init__()
        require(bool(self.question.strip()), "The question is empty: type a problem to trace.")


@dataclass(frozen=True)
class TraceResult:
    """Greedy rollouts of both models on one problem, each scored under both; EOPD signals
    (student = base, teacher = reasoning) along the base rollout."""

    base: ScoredRollout
    reasoning: ScoredRollout
    eopd: dict[str, np.ndarray]  # EOPD_SIGNALS -> [L_base]


def problem_of(config: TraceConfig) -> Problem:
    return typed_problem(config.question, config.answer)


def compute_trace(pair: Pair, config: TraceConfig, progress: Progress = silent) -> TraceResult:
    problem = problem_of(config)
    runs = []
    for i, source in enumerate(("base", "reasoning")):
        progress(i / 2, f"{source} rollout")
        runs.append(generate_one(pair, problem, RolloutConfig(problems=ProblemSet(1), source=source,
                                                              max_new_tokens=config.max_new_tokens)))
    base = runs[0]
    prompt = prompt_ids(pair.base, problem)
    tokens = list(base.token_ids)
    student = at_temperature(rollout_logprobs(pair.base, prompt, tokens), 1.0)
    teacher = at_temperature(rollout_logprobs(pair.reasoning, prompt, tokens), 1.0)
    signals = eopd_signals(student, teacher, torch.tensor(tokens, dtype=torch.long), config.eopd)
    progress(1.0, "traced")
    return TraceResult(base=base, reasoning=runs[1], eopd=signals)


trace: Verb[TraceConfig, TraceResult] = pair_verb(
    "trace", TraceConfig, compute_trace, "one problem traced token by token: both models' greedy rollouts, every "
    "divergence and the EOPD signals", reads=(sys.modules[__name__], scoring, rollout_module, divergences,
                                              at_temperature, eopd_signals))


@dataclass(frozen=True)
class AnalysisConfig(Config):
    problems: ProblemSet = ProblemSet(n=100)
    max_new_tokens: int = same_as(RolloutConfig, "max_new_tokens")
    signal: str = param("ce", "the divergence whose concentration is measured",
                        choices=(*DIVERGENCES, "entropy_base"))
    sources: tuple[str, ...] = ("base", "reasoning")
    top_fraction: float = 0.01
    high_entropy_quantile: float = 0.8
    top_k: int = 8  # failure prediction: mean of the top-k divergences per rollout


@dataclass(frozen=True)
class SourceAnalysis:
    source: str
    n_rollouts: int
    accuracy: float
    concentration: Concentration
    failure: FailurePrediction | None  # None when every rollout is right (or every one wrong)


@dataclass(frozen=True)
class AnalysisResult:
    signal: str
    per_source: tuple[SourceAnalysis, ...]
    skipped: tuple[str, ...]

    def source(self, name: str) -> SourceAnalysis:
        return next(s for s in self.per_source if s.source == name)


def analyse_batch(pair: Pair, batch: tuple[ScoredRollout, ...], config: AnalysisConfig) -> SourceAnalysis:
    special = special_ids(pair.base.tokenizer)
    values, positions, lengths, ent, cats = [], [], [], [], []
    for r in batch:
        if not r.length:
            continue
        values.append(r.signals[config.signal])
        positions.append(np.arange(r.length))
        lengths.append(np.full(r.length, r.length))
        ent.append(r.signals["entropy_base"])
        cats.extend(categorize(r.tokens, special, r.token_ids))
    if not values:
        raise UserError("Every rollout is empty; nothing to analyse.")
    conc = concentration(config.signal, np.concatenate(values), np.concatenate(positions), np.concatenate(lengths),
                         np.concatenate(ent), cats, config.top_fraction, config.high_entropy_quantile)
    scored = [r for r in batch if r.correct is not None]
    correct = [bool(r.correct) for r in scored]
    failure = None
    if scored and 0 < sum(correct) < len(correct):
        failure = predict_failures([r.signals[config.signal] for r in scored],
                                   [r.signals["entropy_base"] for r in scored], correct, config.top_k)
    accuracy = float(np.mean(correct)) if correct else float("nan")
    return SourceAnalysis(source=batch[0].source if batch else "", n_rollouts=len(batch), accuracy=accuracy,
                          concentration=conc, failure=failure)


def compute_analysis(pair: Pair, config: AnalysisConfig, progress: Progress = silent) -> AnalysisResult:
    """Rollouts of each source on the problem set; concentration and failure prediction per source."""
    parts, skipped = [], ()
    for i, source in enumerate(config.sources):
        step = scaled(progress, i / len(config.sources), (i + 1) / len(config.sources))
        batch = rollouts(pair, RolloutConfig(problems=config.problems, source=source,
                                             max_new_tokens=config.max_new_tokens), step).value
        skipped = batch.skipped
        parts.append(analyse_batch(pair, batch.rollouts, config))
    return AnalysisResult(signal=config.signal, per_source=tuple(parts), skipped=skipped)


analyze: Verb[AnalysisConfig, AnalysisResult] = pair_verb(
    "analyze", AnalysisConfig, compute_analysis, "a batch's concentration of disagreement and failure prediction, "
    "per source", reads=(sys.modules[__name__], scoring, rollout_module, divergences, categories,
                         concentration_module, failure_module))
