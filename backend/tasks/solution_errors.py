"""Why a worked arithmetic answer is wrong: the kind of miss, read from the equations it writes.

A reply in the adapter's format writes one equation per step ("Step 1: 48 - 31 = 17") and ends with
"Answer: N". A wrong answer is then one of:
- no answer: no integer to extract;
- arithmetic slip: at least one written equation is false (a correct plan can still end here);
- too few steps: every equation is true but there are fewer than the problem's steps;
- wrong plan: every equation is true and there are enough of them, yet the answer is wrong
  (wrong numbers or operations, a misread question).
The split says whether more training should aim at calculation or at reading the problem.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from backend.tasks.arithmetic import Problem, check_answer, extract_answer

MISS_KINDS = ("no answer", "arithmetic slip", "too few steps", "wrong plan")
KINDS = ("right", *MISS_KINDS)

_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "x": lambda a, b: a * b,
        "×": lambda a, b: a * b, "/": lambda a, b: a / b if b else None, "÷": lambda a, b: a / b if b else None}
_NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)"
_EQUATION = re.compile(_NUMBER + r"\s*([-+*/x×÷])\s*" + _NUMBER + r"\s*=\s*" + _NUMBER)


@dataclass(frozen=True)
class Equation:
    left: Fraction
    op: str
    right: Fraction
    written: Fraction

    @property
    def holds(self) -> bool:
        value = _OPS[self.op](self.left, self.right)
        return value is not None and value == self.written


def _number(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def equations(reply: str) -> list[Equation]:
    """Every 'a op b = c' in the reply, in order (numbers with commas or decimals read exactly)."""
    return [Equation(_number(a), op, _number(b), _number(c)) for a, op, b, c in _EQUATION.findall(reply)]


def classify(problem: Problem, reply: str) -> str:
    """One of KINDS for this reply to this problem."""
    if check_answer(problem, reply):
        return "right"
    if extract_answer(reply) is None:
        return "no answer"
    written = equations(reply)
    if any(not e.holds for e in written):
        return "arithmetic slip"
    if problem.difficulty and len(written) < problem.difficulty:
        return "too few steps"
    return "wrong plan"


def tally(kinds: list[str]) -> dict[str, int]:
    """Count per kind, every kind present (0 when none)."""
    counts = Counter(kinds)
    unknown = set(counts) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kinds {sorted(unknown)}")
    return {kind: counts.get(kind, 0) for kind in KINDS}
