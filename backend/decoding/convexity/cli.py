"""`python -m backend decode compare --task convexbench ...`: the ConvexBench strategies, headless.

The flags are the page's: strategies, depths, problems per depth, problem seed; or one typed `--expression`.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from backend.decoding.convexity.run import (MAX_PROBLEMS, TASK, ConvexSettings, answer_on_model, check_strategies,
                                            run_convex_batch, typed_problem)
from backend.decoding.convexity.strategies import CONVEX_STRATEGIES
from backend.errors import UserError
from backend.models import default_model_id, load
from backend.params import default_of, help_of

TASKS = ("arithmetic", TASK)


def add_flags(parser: argparse.ArgumentParser) -> None:
    """The task picker and the ConvexBench task settings (arithmetic ignores them)."""
    parser.add_argument("--task", choices=TASKS, default="arithmetic",
                        help=f"arithmetic problems, or {TASK} (is a composed expression convex, concave or neither?; "
                             f"strategies {', '.join(CONVEX_STRATEGIES.names())})")
    parser.add_argument("--depth", default=str(default_of(ConvexSettings, "depth")),
                        help=f"{TASK}: {help_of(ConvexSettings, 'depth')}; comma-separated for several, e.g. 2,5,10")
    parser.add_argument("--expression", help=f"{TASK}: one typed expression in x, y, z instead of generated problems")


def _depths(raw: str) -> list[int]:
    try:
        depths = [int(d) for d in raw.split(",") if d.strip()]
    except ValueError:
        raise UserError(f"depth expects comma-separated integers, got {raw!r}.") from None
    for d in depths:
        ConvexSettings(depth=d)  # "depth must be in [1, ...], got 0."
    return depths


def _strategies(raw: str, default_raw: str) -> list[str]:
    if raw == default_raw:  # the arithmetic default names none of this task's strategies
        return list(CONVEX_STRATEGIES.names())
    return [s.strip() for s in raw.split(",") if s.strip()]


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def compare(args: argparse.Namespace, default_strategies: str) -> dict:
    """Bad input is refused before the model loads."""
    strategies = list(check_strategies(_strategies(args.strategies, default_strategies)))
    problem = typed_problem(args.expression) if args.expression is not None else None
    depths = _depths(args.depth) if problem is None else []
    if problem is None and not 1 <= args.problems <= MAX_PROBLEMS:
        raise UserError(f"problems must be between 1 and {MAX_PROBLEMS}, got {args.problems}.")
    handle = load(args.model or default_model_id(), progress=_progress)
    if problem is not None:
        rows = [answer_on_model(handle, problem, s, progress=_progress, chat=not args.no_chat) for s in strategies]
        return {"model": handle.display_name, "task": TASK, "expression": problem.expression,
                "rules_label": problem.label,
                "rows": [{"provenance": r.provenance, "run_id": r.run_id, **_row(r.value)} for r in rows]}
    done = run_convex_batch(handle, strategies, depths, args.problems, args.problem_seed, progress=_progress,
                            chat=not args.no_chat)
    return {"model": handle.display_name, "task": TASK, "provenance": done.provenance, "run_id": done.run_id,
            "f1": done.value.f1_table(), "rules": done.value.rule_accuracy(),
            "rows": [_row(r) for r in done.value.rows]}


def _row(row) -> dict:
    out = dataclasses.asdict(row)
    out.pop("nodes")
    out["node_errors"] = sum(n.answer != n.truth for n in row.nodes)
    return out
