"""Why a worked arithmetic answer is wrong: the kind of miss, read from the equations it writes.

A reply in the adapter's format writes one equation per step ("Step 1: 48 - 31 = 17") and ends with
"Answer: N". A wrong answer is then one of:
- no answer: no integer to extract;
- arithmetic slip: at least one written equation is false (a correct plan can still end here);
- too few steps: every equation is true but there are fewer than the problem's steps;
- wrong plan: every equation is true and there are enough of them, yet the answer is wrong
  (wrong numbers or operations, a misread question).
The split says whether more training should aim at calculation or at reading the problem;
`right_if_computed` tells, for a slip, whether the plan itself was right.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from backend.tasks.arithmetic import Problem, check_answer, extract_answer

MISS_KINDS = ("no answer", "arithmetic slip", "too few steps", "wrong plan")
KINDS = ("right", *MISS_KINDS)

_MULTIPLY, _DIVIDE = {"*", "x", "×"}, {"/", "÷"}
_NUMBER = r"-?\d[\d,]*(?:\.\d+)?"
_OP = r"[-+*/x×÷]"
_EXPRESSION = rf"{_NUMBER}(?:\s*{_OP}\s*{_NUMBER})*"
# an expression with an operator, any worked sides, "=", a final number not continued by an operator:
# "28 * 3 = 84", "5 + 3 + 2 = 10", "158 + 39 = 158 + 30 + 9 = 188 + 9 = 197"
_EQUATION = re.compile(rf"({_NUMBER}\s*{_OP}\s*{_EXPRESSION}(?:\s*=\s*{_EXPRESSION})*?)\s*=\s*({_NUMBER})"
                       rf"(?!\s*{_OP}\s*\d)(?![\d,])")
_TERM = re.compile(rf"({_NUMBER})\s*({_OP})?\s*")


@dataclass(frozen=True)
class Expression:
    terms: tuple[Fraction, ...]
    ops: tuple[str, ...]  # one fewer than terms

    @property
    def value(self) -> Fraction | None:
        """With the usual precedence (* and / before + and -); None on a division by zero."""
        sums, signs, current = [], ["+"], self.terms[0]
        for op, term in zip(self.ops, self.terms[1:]):
            if op in _MULTIPLY:
                current *= term
            elif op in _DIVIDE:
                if term == 0:
                    return None
                current /= term
            else:
                sums.append(current)
                signs.append(op)
                current = term
        sums.append(current)
        return sum((t if sign == "+" else -t for sign, t in zip(signs, sums)), Fraction(0))


@dataclass(frozen=True)
class Equation:
    """'left = [worked sides =] written': left is the step's plan, the sides in between its working."""
    terms: tuple[Fraction, ...]
    ops: tuple[str, ...]  # one fewer than terms
    written: Fraction
    between: tuple[Expression, ...] = ()

    @property
    def value(self) -> Fraction | None:
        return Expression(self.terms, self.ops).value

    @property
    def holds(self) -> bool:
        """Every equality of the chain is true."""
        return self.value == self.written and all(side.value == self.written for side in self.between)


def _number(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def _expression(text: str) -> Expression:
    pairs = _TERM.findall(text)
    return Expression(tuple(_number(n) for n, _ in pairs), tuple(op for _, op in pairs[:-1]))


def equations(reply: str) -> list[Equation]:
    """Every 'a op b [op c ...] [= worked sides] = d' in the reply, in order (numbers with commas or decimals
    read exactly)."""
    found = []
    for chain, written in _EQUATION.findall(reply):
        left, *between = (_expression(side) for side in chain.split("="))
        found.append(Equation(left.terms, left.ops, _number(written), tuple(between)))
    return found


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


def right_if_computed(problem: Problem, reply: str) -> bool:
    """Whether the reply's plan reaches the answer once every equation is computed correctly: each result
    is recomputed, and a later step that used a wrong result as an operand gets the corrected one."""
    corrected: dict[Fraction, Fraction] = {}
    last = None
    for e in equations(reply):
        terms = tuple(corrected.get(t, t) for t in e.terms)
        last = Expression(terms, e.ops).value
        if last is None:
            return False
        if last != e.written:
            corrected[e.written] = last
    return last is not None and last == problem.answer


def tally(kinds: list[str]) -> dict[str, int]:
    """Count per kind, every kind present (0 when none)."""
    counts = Counter(kinds)
    unknown = set(counts) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kinds {sorted(unknown)}")
    return {kind: counts.get(kind, 0) for kind in KINDS}
