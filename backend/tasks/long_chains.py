"""Word problems longer than anything the arithmetic adapter was trained on: 4 to 8 operations in one story.

The adapter learnt from one- to three-step problems (`arithmetic.generate_problems`), whose worked solutions end
within about 140 tokens. These chains come from the broad family's `collection` scenario (the one scenario that
takes any number of operations), so the wording is familiar and only the length is new: the setting where a
decoding strategy must carry the reasoning past the training length (RC, `backend.decoding.algorithms.rc`).
Ids and the train/held-out split follow the broad family's rule (scenario, operations, every number shown).
"""
from __future__ import annotations

import random

from backend.tasks.arithmetic import Problem, written_problems
from backend.tasks.word_problems import SCENARIOS, write_problem

LONG_STEPS = (4, 5, 6, 7, 8)
_SCENARIO = {"collection": SCENARIOS["collection"]}


def long_problems(n: int, steps: int | None = None, split: str = "heldout", seed: int = 0,
                  style: str = "worked") -> list[Problem]:
    """n distinct problems of `steps` operations (None: 4-6 mixed); the same arguments give the same list.
    `style` writes the reference solution as the adapter's training targets were written (worked_arithmetic)."""
    if steps is not None and steps not in LONG_STEPS:
        raise ValueError(f"steps must be one of {LONG_STEPS} or None, got {steps!r}")
    return written_problems(random.Random(seed), n, split, style, family="long",
                            levels=(steps,) if steps else (4, 5, 6), scenarios=_SCENARIO)
