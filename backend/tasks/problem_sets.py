"""The arithmetic problem sets the pages, benchmarks and the adapter's evaluation draw from.

"classic" and "broad" are the generator's families (backend.tasks.arithmetic / word_problems); "handwritten"
is data/arith/handwritten.jsonl, problems written by hand in wording the generator never produces and never
trained on, the honest test of whether the reasoning adapter learnt arithmetic rather than templates.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

from backend.tasks.arithmetic import Problem, generate_problems, load_jsonl_problems

HANDWRITTEN = Path(__file__).resolve().parents[2] / "data" / "arith" / "handwritten.jsonl"
PROBLEM_SETS = {
    "classic": "generator: classic templates",
    "broad": "generator: broad word problems",
    "handwritten": "hand-written (never trained on)",
}


@cache
def handwritten_problems() -> tuple[Problem, ...]:
    return tuple(load_jsonl_problems(HANDWRITTEN.read_text()))


def problem_set(name: str, n: int, difficulty: int | None = None, split: str = "heldout",
                seed: int = 0) -> list[Problem]:
    """The first n problems of a set (of one difficulty when given); the same arguments give the same list."""
    if name not in PROBLEM_SETS:
        raise ValueError(f"problem set must be one of {sorted(PROBLEM_SETS)}, got {name!r}")
    if name == "handwritten":
        return [p for p in handwritten_problems() if difficulty is None or p.difficulty == difficulty][:n]
    return generate_problems(n, split, seed=seed, difficulty=difficulty, family=name)
