"""Running the ConvexBench strategies: one expression, or every strategy on generated problems at several depths.

Every answer is cached in the store (key: strategy, expression, label, chat, model fingerprint) and a batch is
one run on the Runs page; a judge other than the model (the oracle) is never cached.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import backend.decoding.convexity.judge as judge_module
import backend.decoding.convexity.strategies as strategies_module
from backend.decoding.convexity.judge import ModelJudge
from backend.decoding.convexity.scores import bootstrap_f1, macro_f1
from backend.decoding.convexity.strategies import CONVEX_STRATEGIES, Judge, NodeJudgement
from backend.errors import UserError
from backend.params import Config, param
from backend.progress import Progress, scaled, silent
from backend.significance import wilson_interval as wilson
from backend.store import Computed
from backend.tasks.convexity import MAX_DEPTH, ConvexProblem, check_depth, convex_problems, parse_expression, rule_label
from backend.verbs import Verb, register

FEATURE = "decoding"
TASK = "convexbench"
MAX_PROBLEMS = 300  # per depth


@dataclass(frozen=True)
class ConvexSettings(Config):
    """The task settings of a ConvexBench batch (page widgets and CLI flags read these fields)."""

    depth: int = param(5, "operators composed per variable chain", ge=1, le=MAX_DEPTH)
    problems: int = param(12, "problems per depth (labels cycle convex, concave, neither)", ge=1, le=MAX_PROBLEMS)
    seed: int = param(0, "problem seed")


@dataclass(frozen=True)
class ConvexRow:
    """One strategy on one expression."""

    strategy: str
    problem_id: str
    depth: int
    expression: str
    label: str
    answer: str
    correct: bool
    questions: int  # questions the strategy asked (node questions: two per operator)
    forwards: int  # forwards the model ran for them (repeated questions are answered once per batch)
    wall_seconds: float
    log_probs: tuple[float, ...] = ()
    nodes: tuple[NodeJudgement, ...] = ()


@dataclass(frozen=True)
class ConvexBatch:
    model_id: str
    strategies: tuple[str, ...]
    depths: tuple[int, ...]
    rows: tuple[ConvexRow, ...] = field(default=())

    def f1_table(self) -> list[dict]:
        """Per strategy and depth: n, macro F1 with its 95% bootstrap interval, accuracy with Wilson's."""
        out = []
        for strategy in self.strategies:
            for depth in self.depths:
                rows = [r for r in self.rows if r.strategy == strategy and r.depth == depth]
                if not rows:
                    continue
                labels, answers = [r.label for r in rows], [r.answer for r in rows]
                lo, hi = bootstrap_f1(labels, answers)
                right = sum(r.correct for r in rows)
                a_lo, a_hi = wilson(right, len(rows))
                out.append({"strategy": strategy, "depth": depth, "n": len(rows), "f1": macro_f1(labels, answers),
                            "f1_lo": lo, "f1_hi": hi, "accuracy": right / len(rows), "accuracy_lo": a_lo,
                            "accuracy_hi": a_hi, "answered": {a: answers.count(a) for a in sorted(set(answers))},
                            "mean_questions": sum(r.questions for r in rows) / len(rows),
                            "mean_seconds": sum(r.wall_seconds for r in rows) / len(rows)})
        return out

    def rule_accuracy(self) -> list[dict]:
        """Per rule (operator kind and question) of the decomposed strategy: how often the per-node answer was
        right, over every node of every expression (Wilson interval), and what was answered instead."""
        by_rule: dict[str, list[NodeJudgement]] = {}
        for r in self.rows:
            for node in r.nodes:
                by_rule.setdefault(node.rule, []).append(node)
        out = []
        for rule, nodes in sorted(by_rule.items()):
            right = sum(n.answer == n.truth for n in nodes)
            lo, hi = wilson(right, len(nodes))
            wrong = [n.answer for n in nodes if n.answer != n.truth]
            out.append({"rule": rule, "truth": nodes[0].truth, "n": len(nodes),
                        "distinct_questions": len({n.text for n in nodes}), "accuracy": right / len(nodes),
                        "accuracy_lo": lo, "accuracy_hi": hi,
                        "answered_instead": max(set(wrong), key=wrong.count) if wrong else ""})
        return out


@dataclass(frozen=True)
class AnswerKey:
    strategy: str
    problem_id: str
    expression: str
    label: str
    chat: bool


def typed_problem(expression: str) -> ConvexProblem:
    """A typed expression as a problem; its label is the composition rules' (neither: not certified by them)."""
    tree = parse_expression(expression)
    return ConvexProblem(id="typed", expression=expression, depth=0, label=rule_label(expression),
                         variables=tree.variables)


def answer(problem: ConvexProblem, strategy: str, judge: Judge, progress: Progress = silent) -> ConvexRow:
    """One strategy's answer, uncached (the oracle, tests)."""
    spec = CONVEX_STRATEGIES.get(strategy)
    before = getattr(judge, "forwards", 0)
    start = time.perf_counter()
    verdict = spec.run(problem, judge, progress)
    return ConvexRow(strategy=strategy, problem_id=problem.id, depth=problem.depth, expression=problem.expression,
                     label=problem.label or "", answer=verdict.answer, correct=verdict.answer == problem.label,
                     questions=max(1, len(verdict.nodes)), forwards=getattr(judge, "forwards", 0) - before,
                     wall_seconds=time.perf_counter() - start, log_probs=verdict.log_probs, nodes=verdict.nodes)


@dataclass(frozen=True)
class AnswerRequest:
    """One strategy on one expression; `judge`: the batch's model judge (it answers a repeated question once), or
    None for a judge of its own. The store keys on the strategy, the problem and `chat` (`AnswerKey`)."""

    problem: ConvexProblem
    strategy: str
    chat: bool = True
    judge: ModelJudge | None = None


def _answer_key(handle, request: AnswerRequest) -> AnswerKey:
    p = request.problem
    return AnswerKey(request.strategy, p.id, p.expression, p.label or "", request.chat)


def compute_answer(handle, request: AnswerRequest, progress: Progress = silent) -> ConvexRow:
    judge = request.judge or ModelJudge(handle, request.chat)
    return answer(request.problem, request.strategy, judge, progress)


_READS = (sys.modules[__name__], strategies_module, judge_module)

answer_verb: Verb[AnswerRequest, ConvexRow] = register(Verb(
    FEATURE, "convexity", AnswerRequest, compute_answer, "ConvexBench: one strategy's answer on one expression",
    reads=_READS, key=_answer_key))


def answer_on_model(handle, problem: ConvexProblem, strategy: str, judge: ModelJudge | None = None,
                  progress: Progress = silent, chat: bool = True) -> Computed[ConvexRow]:
    """One strategy's answer by the model, through the store."""
    CONVEX_STRATEGIES.get(strategy)
    return answer_verb(handle, AnswerRequest(problem, strategy, chat, judge), progress)


@dataclass(frozen=True)
class ConvexBatchConfig:
    """A ConvexBench batch: every strategy on `problems` generated expressions per depth (the store's key)."""

    strategies: tuple[str, ...]
    depths: tuple[int, ...]
    problems: int
    seed: int
    chat: bool


def check_strategies(strategies: Sequence[str]) -> tuple[str, ...]:
    if not strategies:
        raise UserError("strategies: pick at least one of " + ", ".join(CONVEX_STRATEGIES.names()) + ".")
    for name in strategies:
        CONVEX_STRATEGIES.get(name)
    return tuple(dict.fromkeys(strategies))


def compute_convex_batch(handle, config: ConvexBatchConfig, progress: Progress = silent) -> ConvexBatch:
    """Depths outer, so a stopped run has every strategy on the depths it finished."""
    judge = ModelJudge(handle, config.chat)
    rows = []
    work = [(d, p, s) for d in config.depths for p in convex_problems(config.problems, d, config.seed)
            for s in config.strategies]
    for k, (depth, problem, strategy) in enumerate(work):
        sub = scaled(progress, k / len(work), (k + 1) / len(work))
        done = answer_on_model(handle, problem, strategy, judge,
                             lambda f, m: sub(f, f"depth {depth}, {problem.id}, {strategy}: {m}"), config.chat)
        rows.append(done.value)
    progress(1.0, "done")
    return ConvexBatch(model_id=handle.id, strategies=config.strategies, depths=config.depths, rows=tuple(rows))


convex_batch: Verb[ConvexBatchConfig, ConvexBatch] = register(Verb(
    FEATURE, "convexity-batch", ConvexBatchConfig, compute_convex_batch,
    "ConvexBench: every strategy on generated expressions at several depths", reads=_READS))


def run_convex_batch(handle, strategies: Sequence[str], depths: Sequence[int], problems: int, seed: int = 0,
                     progress: Progress = silent, chat: bool = True) -> Computed[ConvexBatch]:
    """Every strategy on `problems` generated expressions per depth (depths outer, so a stopped run has every
    strategy on the depths it finished)."""
    strategies = check_strategies(strategies)
    if not depths:
        raise UserError("depth: give at least one depth.")
    for depth in depths:
        check_depth(depth)
    ConvexSettings(depth=depths[0], problems=problems, seed=seed)  # ranges, with the field named
    return convex_batch(handle, ConvexBatchConfig(strategies, tuple(depths), problems, seed, chat), progress)
