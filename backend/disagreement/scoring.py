"""Batches of rollouts scored under both models: the shared input of analysis, calibration and the sweep.

Generating is the expensive part (one forward per token); scoring a finished rollout costs one
teacher-forced forward per model. A batch is cached, so the analysis, the gate calibration and the
sweep's reference lines reuse the same rollouts; each rollout is stored too, so a batch interrupted
half-way (a killed benchmark, a closed tab) resumes from the rollouts already made.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

import backend.disagreement.divergences as divergences
import backend.disagreement.rollout as rollout_module
from backend.disagreement.divergences import token_divergences
from backend.disagreement.pair import Pair, pair_verb
from backend.disagreement.rollout import (ProblemSet, answer_correct, decode_tokens, prompt_ids,
                                          rollout_logprobs, sample)
from backend.errors import UserError
from backend.models.rules import Fitting, keep_fitting
from backend.params import Config, param
from backend.progress import Progress, silent
from backend.tasks.arithmetic import Problem
from backend.verbs import Verb

SOURCES = ("base", "reasoning")


@dataclass(frozen=True)
class ScoredRollout:
    """One rollout and, per generated token, every divergence signal `{name: [L]}` (nats) plus the
    log-probability of the generated token under each model (`logp_base`, `logp_reason`, `[L]`) and
    `differs` (1.0 where the two models' greedy tokens on that prefix differ, else 0.0)."""

    problem_id: str
    question: str
    answer: int
    source: str  # which model generated it: "base" | "reasoning"
    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    text: str
    correct: bool | None
    signals: dict[str, np.ndarray]

    @property
    def length(self) -> int:
        return len(self.token_ids)


@dataclass(frozen=True)
class RolloutConfig(Config):
    problems: ProblemSet = ProblemSet()
    source: str = "base"
    max_new_tokens: int = param(96, "new tokens per sequence (a rollout or a decoded answer)", ge=1)
    temperature: float = 0.0  # 0: greedy
    seed: int = 0


@dataclass(frozen=True)
class RolloutBatch:
    rollouts: tuple[ScoredRollout, ...]
    skipped: tuple[str, ...]  # problem ids whose prompt did not fit the context

    @property
    def accuracy(self) -> float:
        scored = [r.correct for r in self.rollouts if r.correct is not None]
        return float(np.mean(scored)) if scored else float("nan")


def score(pair: Pair, problem: Problem, prompt: torch.Tensor, tokens: list[int], source: str) -> ScoredRollout:
    """Both models' distributions along `tokens` and the signals between them."""
    logp_base = rollout_logprobs(pair.base, prompt, tokens)
    logp_reason = rollout_logprobs(pair.reasoning, prompt, tokens)
    signals = {k: v.numpy().astype(np.float32) for k, v in token_divergences(logp_base, logp_reason).items()}
    index = torch.tensor(tokens, dtype=torch.long).view(-1, 1)
    signals["logp_base"] = logp_base.gather(1, index).view(-1).numpy().astype(np.float32)
    signals["logp_reason"] = logp_reason.gather(1, index).view(-1).numpy().astype(np.float32)
    signals["differs"] = (logp_base.argmax(-1) != logp_reason.argmax(-1)).numpy().astype(np.float32)
    text, pieces = decode_tokens(pair.base, tokens)
    return ScoredRollout(problem_id=problem.id, question=problem.question, answer=problem.answer, source=source,
                         token_ids=tuple(tokens), tokens=pieces, text=text, correct=answer_correct(problem, text),
                         signals=signals)


def generate_one(pair: Pair, problem: Problem, config: RolloutConfig, index: int = 0) -> ScoredRollout:
    if config.source not in SOURCES:
        raise UserError(f"Unknown rollout source {config.source!r}; choose one of {', '.join(SOURCES)}.")
    handle = pair.base if config.source == "base" else pair.reasoning
    prompt = prompt_ids(pair.base, problem)
    tokens = sample(handle, prompt, config.max_new_tokens, pair.stops, config.temperature, config.seed + index)
    return score(pair, problem, prompt, tokens, config.source)


@dataclass(frozen=True)
class RolloutKey:
    """What one rollout of a batch depends on: its stored artifact's key."""

    problem: Problem
    source: str
    max_new_tokens: int
    temperature: float
    seed: int  # the batch's seed + the problem's index in it

    @classmethod
    def of(cls, problem: Problem, config: RolloutConfig, index: int) -> RolloutKey:
        return cls(problem, config.source, config.max_new_tokens, config.temperature, config.seed + index)


@dataclass(frozen=True)
class RolloutRequest:
    """One rollout of a batch: the problem, the batch's settings and the problem's place in the whole set."""

    problem: Problem
    config: RolloutConfig
    index: int


def _rollout_key(pair: Pair, request: RolloutRequest) -> RolloutKey:
    return RolloutKey.of(request.problem, request.config, request.index)


def compute_rollout(pair: Pair, request: RolloutRequest, progress: Progress = silent) -> ScoredRollout:
    return generate_one(pair, request.problem, request.config, request.index)


_READS = (sys.modules[__name__], rollout_module, divergences)  # the rollouts' code: this module and what it calls

one_rollout: Verb[RolloutRequest, ScoredRollout] = pair_verb(
    "rollout", RolloutRequest, compute_rollout, "one rollout of a batch, scored under both models", reads=_READS,
    key=_rollout_key)


def stored_rollout(pair: Pair, problem: Problem, config: RolloutConfig, index: int) -> ScoredRollout:
    """`generate_one` through the store."""
    return one_rollout(pair, RolloutRequest(problem, config, index)).value


def fitting(pair: Pair, problems: Sequence[Problem], max_new_tokens: int) -> Fitting[Problem]:
    """The context rule for a batch of problems: those whose prompt leaves room for max_new_tokens are kept, the
    others skipped and named by id (both models share the tokenizer; the base model's context is asked)."""
    return keep_fitting(pair.base.model, problems, lambda p: prompt_ids(pair.base, p).shape[1], max_new_tokens,
                        lambda p: p.id)


def compute_rollouts(pair: Pair, config: RolloutConfig, progress: Progress = silent) -> RolloutBatch:
    problems = config.problems.problems()
    skipped = fitting(pair, problems, config.max_new_tokens).skipped
    out = []
    for i, problem in enumerate(problems):  # i: the seed offset of the problem's place in the whole set
        progress(i / len(problems), f"{config.source} rollout {i + 1}/{len(problems)}")
        if problem.id not in skipped:
            out.append(stored_rollout(pair, problem, config, i))
    progress(1.0, f"{len(out)} {config.source} rollouts")
    return RolloutBatch(rollouts=tuple(out), skipped=skipped)


rollouts: Verb[RolloutConfig, RolloutBatch] = pair_verb(
    "rollouts", RolloutConfig, compute_rollouts,
    "rollouts of one source on a problem set, each scored under both models", reads=_READS)
