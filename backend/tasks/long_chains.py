"""Word problems longer than anything the arithmetic adapter was trained on: 4 to 8 operations in one story.

The adapter learnt from one- to three-step problems (`arithmetic.generate_problems`), whose worked solutions end
within about 140 tokens. These chains come from the broad family's `collection` scenario (the one scenario that
takes any number of operations), so the wording is familiar and only the length is new: the setting where a
decoding strategy must carry the reasoning past the training length (RC, `backend.decoding.algorithms.rc`).
Ids and the train/held-out split follow the broad family's rule (scenario, operations, every number shown).
"""
from __future__ import annotations

import random

from backend.tasks.arithmetic import Problem, format_solution, split_of
from backend.tasks.word_problems import SCENARIOS, write_problem

LONG_STEPS = (4, 5, 6, 7, 8)
_SCENARIO = {"collection": SCENARIOS["collection"]}


def long_problems(n: int, steps: int | None = None, split: str = "heldout", seed: int = 0,
                  style: str = "worked") -> list[Problem]:
    """n distinct problems of `steps` operations (None: 4-6 mixed); the same arguments give the same list.
    `style` writes the reference solution as the adapter's training targets were written (worked_arithmetic)."""
    if steps is not None and steps not in LONG_STEPS:
        raise ValueError(f"steps must be one of {LONG_STEPS} or None, got {steps!r}")
    rng = random.Random(seed)
    out: list[Problem] = []
    seen: set[str] = set()
    for _ in range(2000 + 200 * n):  # bounded, as the other generators
        if len(out) >= n:
            return out
        level = steps or rng.choice((4, 5, 6))
        written = write_problem(rng, level, _SCENARIO)
        if written is None:
            continue
        pid = "-".join(["long", written.scenario, "".join(s[1] for s in written.steps), *map(str, written.shown)])
        if pid in seen or split_of(pid) != split:
            continue
        seen.add(pid)
        out.append(Problem(pid, written.question, written.steps[-1][3], format_solution(list(written.steps), style),
                           split, level))
    raise ValueError(f"could only generate {len(out)} of {n} distinct long {split} problems")
