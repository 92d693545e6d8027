"""Running strategies: one prompt (`run_one`), many problems x settings (`run_batch`), budget sweeps.

Every decode goes through the store: the cache key is the canonical config (fields the strategy
does not read are reset), the prompt text, the expected answer and the model fingerprint.
"""
from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

import backend.decoding.config as config_module
import backend.decoding.context as context_module
import backend.decoding.rc_prompts as rc_prompts
import backend.decoding.resampling as resampling
import backend.decoding.result as result_module
import backend.decoding.sampler as sampler
import backend.decoding.select as select
from backend.decoding.algorithms import asmc, basic, mh, rc, smc
from backend.decoding.config import DecodeConfig, canonical
from backend.decoding.context import DecodeContext
from backend.decoding.registry import STRATEGIES, StrategySpec
from backend.decoding.result import BatchResult, BatchRow, DecodeResult
from backend.errors import UserError
from backend.models.rules import check_room, keep_fitting, stop_ids
from backend.models.generate import encode_prompt
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.tasks.arithmetic import Problem, extract_answer, format_prompt, where
from backend.verbs import Verb, register

FEATURE = "decoding"
# A decode's code: this module, the strategies of backend.decoding.algorithms and the machinery they run on.
# (A strategy another feature plugs in is not named here: the decoding core names no other feature.)
RUN_READS = (sys.modules[__name__], basic, mh, asmc, rc, smc, rc_prompts, config_module, context_module,
             resampling, result_module, sampler, select)


@dataclass(frozen=True)
class RunKey:
    """The cache key of one decode."""

    config: DecodeConfig
    prompt: str
    expected: int | None
    problem_id: str
    chat: bool


def prepare(config: DecodeConfig) -> tuple[StrategySpec, DecodeConfig]:
    """The strategy and its canonical config (the config validated itself when it was built)."""
    return config.spec(), canonical(config)


def _seed(seed: int, prompt: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{prompt}".encode()).digest()[:7], "big")


def _compute(handle, spec: StrategySpec, key: RunKey, ids: torch.Tensor, progress: Progress) -> DecodeResult:
    checker = extract_answer if key.expected is not None else None
    generator = torch.Generator().manual_seed(_seed(key.config.seed, key.prompt))
    ctx = DecodeContext(handle=handle, prompt_ids=ids, stops=tuple(sorted(stop_ids(handle))), generator=generator,
                        answer_of=checker, progress=progress, prompt=key.prompt, chat=key.chat,
                        precision=key.config.precision)
    start = time.perf_counter()
    out = spec.run(ctx, key.config)
    wall = time.perf_counter() - start
    text = ctx.text(out.token_ids)
    answer = extract_answer(text)  # the problem sets' rule, for free prompts too: "Answer: 12" reads as 12
    correct = None if key.expected is None else answer == key.expected
    progress(1.0, f"{spec.label}: done")
    return DecodeResult(strategy=spec.name, config=key.config, model_id=handle.id, problem_id=key.problem_id,
                        prompt=key.prompt, output=text, token_ids=tuple(out.token_ids), answer=answer,
                        expected=key.expected, correct=correct, tokens_generated=out.tokens_generated,
                        forward_passes=out.forward_passes, wall_seconds=wall, candidates=out.candidates,
                        particles=out.particles, mh=out.mh, cycles=out.cycles, notes=out.notes)


def run_key(task: Problem | str, config: DecodeConfig, chat: bool = True, expected: int | None = None) -> RunKey:
    """The store key of one decode (the config made canonical); `expected`: a free prompt's expected answer."""
    config = prepare(config)[1]
    if isinstance(task, Problem):
        return RunKey(config=config, prompt=format_prompt(task), expected=task.answer, problem_id=task.id, chat=chat)
    return RunKey(config=config, prompt=str(task), expected=expected, problem_id="", chat=chat)


def _checked(handle, key: RunKey) -> tuple[StrategySpec, torch.Tensor]:
    """The strategy and the encoded prompt, refused (UserError) when the prompt leaves no room for the decode."""
    spec = key.config.spec()
    ids = encode_prompt(handle, key.prompt, key.chat)
    check_room(handle.model, ids.shape[1], key.config.max_new_tokens)  # one decode: refused before any forward
    return spec, ids


def compute_run(handle, key: RunKey, progress: Progress = silent) -> DecodeResult:
    spec, ids = _checked(handle, key)
    return _compute(handle, spec, key, ids, progress)


run: Verb[RunKey, DecodeResult] = register(Verb(
    FEATURE, "run", RunKey, compute_run, "one strategy on one prompt or problem", reads=RUN_READS,
    variants=(STRATEGIES,)))
# the same decode kept beside a stored run that predates the particle history (backend.decoding.particle)
run_history: Verb[RunKey, DecodeResult] = register(Verb(
    FEATURE, "run-history", RunKey, compute_run, "a stored run decoded again to rebuild its particle history",
    reads=RUN_READS, variants=(STRATEGIES,)))


def run_keyed(handle, key: RunKey, progress: Progress = silent,
              store: bool = True) -> Computed[DecodeResult] | DecodeResult:
    """The decode of `key`: through the store, or (store=False) computed afresh and not kept."""
    if not store:
        return compute_run(handle, key, progress)
    _checked(handle, key)  # refused before the store is asked, stored or not
    return run(handle, key, progress)


def run_one(handle, task: Problem | str, config: DecodeConfig, progress: Progress = silent,
           chat: bool = True, expected: int | None = None) -> Computed[DecodeResult]:
    """Run one strategy on a task problem (answer checked) or a free prompt. A free prompt's answer is read by the
    problem sets' rule (`extract_answer`); with `expected` it is checked, and checked strategies use it as they do
    on a problem (best-of-n's and ASMC's answer-aware choices)."""
    return run_keyed(handle, run_key(task, config, chat, expected), progress)


@dataclass(frozen=True)
class Setting:
    """A labelled config of a batch; `budget` is generated tokens / max_new_tokens (1 when fixed)."""

    label: str
    budget: int
    config: DecodeConfig


MAX_BUDGET = 256  # a budget multiplier: best-of-256 is already more than a page batch can afford


def settings_for(configs: Sequence[DecodeConfig], budgets: Sequence[int] = ()) -> list[Setting]:
    """One setting per config, or one per (config, budget) for strategies whose cost can be set."""
    bad = [b for b in budgets if not 1 <= b <= MAX_BUDGET]
    if bad:  # a budget of -5 once ran as "x-5" with n silently 2
        raise UserError(f"Budget multipliers must be whole numbers from 1 to {MAX_BUDGET}, got {bad[0]}.")
    out = []
    for config in configs:
        spec = config.spec()
        if spec.at_budget is None or not budgets:
            out.append(Setting(label=spec.label, budget=1, config=config))
        else:
            out += [Setting(label=f"{spec.label} x{b}", budget=b, config=spec.at_budget(config, b)) for b in budgets]
    for s in list(out):  # a strategy's reference run (RC: plain decoding at its total budget), once per label
        reference = s.config.spec().reference
        if reference is not None:
            label, ref = reference(s.config)
            if all(o.label != label for o in out):
                out.append(Setting(label=label, budget=1, config=ref))
    return out


@dataclass(frozen=True)
class BatchKey:
    settings: tuple[Setting, ...]
    problems: tuple[tuple[str, str, int], ...]  # (id, question, answer)
    chat: bool


@dataclass(frozen=True)
class BatchRequest:
    """A batch: every setting (canonical configs) on every problem; `on_problem` watches it (not in the key)."""

    problems: tuple[Problem, ...]
    settings: tuple[Setting, ...]
    chat: bool = True
    on_problem: Callable[[BatchResult, int], None] | None = None


def _batch_key(handle, request: BatchRequest) -> BatchKey:
    return BatchKey(settings=request.settings, problems=tuple((p.id, p.question, p.answer) for p in request.problems),
                    chat=request.chat)


def compute_batch(handle, request: BatchRequest, progress: Progress = silent) -> BatchResult:
    problems, settings, chat, on_problem = request.problems, request.settings, request.chat, request.on_problem
    longest = max(s.config.max_new_tokens for s in settings)
    # the context rule for a batch, before any decoding: a problem whose prompt leaves no room for the longest
    # setting is skipped for every setting (so all settings see the same problems) and named in the result
    fitting = keep_fitting(handle.model, problems,
                           lambda p: encode_prompt(handle, format_prompt(p), chat).shape[1], longest, where)
    kept = fitting.kept

    def result(rows: list[BatchRow]) -> BatchResult:
        return BatchResult(model_id=handle.id, rows=tuple(rows), labels=tuple(s.label for s in settings),
                           skipped=fitting.skipped)

    rows, total = [], len(kept) * len(settings)
    for i, problem in enumerate(kept):
        for j, s in enumerate(settings):
            k = i * len(settings) + j
            sub = scaled(progress, k / total, (k + 1) / total)
            done = run_one(handle, problem, s.config, lambda f, m: sub(f, f"problem {i + 1}/{len(kept)}, "
                                                                        f"{s.label}: {m}"), chat)
            r = done.value
            rows.append(BatchRow(label=s.label, strategy=r.strategy, budget=s.budget, problem_id=problem.id,
                                 correct=r.correct, answer=r.answer, expected=r.expected,
                                 wall_seconds=r.wall_seconds, tokens_generated=r.tokens_generated,
                                 forward_passes=r.forward_passes, ess_min_ratio=r.ess_min_ratio,
                                 acceptance_rate=r.acceptance_rate, run_key=done.key,
                                 cycle_answers=tuple(c.answer for c in r.cycles),
                                 cycle_tokens=r.cycle_tokens))
        if on_problem is not None:
            on_problem(result(rows), len(kept))
    return result(rows)


batch: Verb[BatchRequest, BatchResult] = register(Verb(
    FEATURE, "batch", BatchRequest, compute_batch, "every setting on every problem (each decode cached on its own)",
    reads=RUN_READS, key=_batch_key, variants=(STRATEGIES,)))


def run_batch(handle, problems: Sequence[Problem], settings: Sequence[Setting], progress: Progress = silent,
              chat: bool = True, on_problem: Callable[[BatchResult, int], None] | None = None) -> Computed[BatchResult]:
    """Every setting on every problem (each decode cached on its own); problems outer, so settings
    interleave in time and share the machine's load fairly. Problems whose prompt leaves no room for the longest
    setting's max_new_tokens are skipped and named in `BatchResult.skipped` (the context rule for batches).
    `on_problem(partial, total)`: after each problem, the rows so far as a BatchResult, and how many problems
    there are; only the complete result is stored."""
    if not problems:
        raise UserError("No problems to run.")
    if not settings:
        raise UserError("Pick at least one strategy.")
    settings = tuple(Setting(label=s.label, budget=s.budget, config=prepare(s.config)[1]) for s in settings)
    return batch(handle, BatchRequest(tuple(problems), settings, chat, on_problem), progress)
