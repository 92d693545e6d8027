"""The arithmetic problem sets the pages, benchmarks and the adapter's evaluation draw from.

"classic" and "broad" are the generator's families (backend.tasks.arithmetic / word_problems); "handwritten"
is data/arith/handwritten.jsonl, problems written by hand in wording the generator never produces and never
trained on, the honest test of whether the reasoning adapter learnt arithmetic rather than templates.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

from backend.tasks.arithmetic import Problem, generate_problems, load_jsonl_problems
from backend.tasks.long_chains import LONG_STEPS, long_problems

HANDWRITTEN = Path(__file__).resolve().parents[2] / "data" / "arith" / "handwritten.jsonl"
PROBLEM_SETS = {
    "classic": "generator: classic templates",
    "broad": "generator: broad word problems",
    "handwritten": "hand-written (never trained on)",
    "long": "generator: long chains, 4-8 steps (past the adapter's training length)",
}


GENERATED_BROWSABLE = 500  # how far a page lets one browse a generated set (the generator has no end)


@cache
def handwritten_problems() -> tuple[Problem, ...]:
    return tuple(load_jsonl_problems(HANDWRITTEN.read_text()))


def steps_of(name: str) -> tuple[int, ...]:
    """The step counts a set offers (its `difficulty` values)."""
    return LONG_STEPS if name == "long" else (1, 2, 3)


def problem_set(name: str, n: int, difficulty: int | None = None, split: str = "heldout",
                seed: int = 0) -> list[Problem]:
    """The first n problems of a set (of one difficulty when given); the same arguments give the same list."""
    if name not in PROBLEM_SETS:
        raise ValueError(f"problem set must be one of {sorted(PROBLEM_SETS)}, got {name!r}")
    if name == "handwritten":
        return [p for p in handwritten_problems() if difficulty is None or p.difficulty == difficulty][:n]
    if name == "long":
        return long_problems(n, difficulty, split, seed)
    return generate_problems(n, split, seed=seed, difficulty=difficulty, family=name)


def problem_set_size(name: str, difficulty: int | None = None) -> int:
    """How many problems `problem_set(name, ...)` can give: the hand-written file's count, or the browsable
    stretch of a generated set."""
    if name == "handwritten":
        return sum(difficulty is None or p.difficulty == difficulty for p in handwritten_problems())
    return GENERATED_BROWSABLE


def evenly_spread(problems: list[Problem] | tuple[Problem, ...], n: int) -> list[Problem]:
    """n problems spread evenly over `problems` (the hand-written file is ordered by difficulty, so a prefix
    would hold only one-step problems); all of them when n is larger."""
    take = min(n, len(problems))
    return [problems[i * len(problems) // take] for i in range(take)] if take else []
