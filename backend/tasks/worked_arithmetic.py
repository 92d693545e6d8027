"""One arithmetic step written out in place-value pieces, for a small model that slips on one-shot sums.

The embedded tokenizer writes every digit as its own token, most significant first, so a one-shot
"158 + 39 = 197" needs the carry before it has written the digits that cause it. Splitting the second
operand into its tens-and-above part and its ones leaves each equality a smaller job:

    158 + 39 = 158 + 30 + 9 = 188 + 9 = 197
    48 - 31 = 48 - 30 - 1 = 18 - 1 = 17
    7 * 17 = 7 * 10 + 7 * 7 = 70 + 49 = 119
    158 / 2 = 140 / 2 + 18 / 2 = 70 + 9 = 79

Every side of a chain has the same value under the usual precedence, so `solution_errors` can check each
equality of it. A step with nothing to split (a one-digit operand, a round number, a one-digit quotient)
stays "a op b = c".

Style "worked" splits +, - and * only; "worked+division" splits divisions too. Adapter attempt 4 trained on
the latter and learnt to write "= 10" for one-digit quotients (45 / 5 = 10): the split form must guess the
quotient's tens before writing anything, which is the hard part of the division itself.
"""
from __future__ import annotations

SOLUTION_STYLES = ("plain", "worked", "worked+division")  # "Step i: a op b = c", or the chains above


def _split(n: int) -> tuple[int, int]:
    """n as (its tens-and-above part, its ones): 158 -> (150, 8)."""
    return n - n % 10, n % 10


def worked_equation(a: int, op: str, b: int, c: int, split_division: bool = True) -> str:
    """'a op b = ... = c', the pieces in between when there is something to split."""
    if op not in ("+", "-", "*", "/"):
        raise ValueError(f"unknown operation {op!r}")
    # what is split: the second operand of a sum or difference, the larger factor, the quotient
    tens, ones = _split({"+": b, "-": b, "*": max(a, b), "/": c}[op])
    if tens == 0 or ones == 0 or (op == "/" and not split_division):
        return f"{a} {op} {b} = {c}"
    if op in ("+", "-"):
        partial = a + tens if op == "+" else a - tens
        pieces = f"{a} {op} {tens} {op} {ones} = {partial} {op} {ones}"
    elif op == "*":
        k = min(a, b)  # 7 * 17 = 7 * 10 + 7 * 7
        pieces = f"{k} * {tens} + {k} * {ones} = {k * tens} + {k * ones}"
    else:
        pieces = f"{b * tens} / {b} + {b * ones} / {b} = {tens} + {ones}"
    return f"{a} {op} {b} = {pieces} = {c}"


def format_step(i: int, a: int, op: str, b: int, c: int, style: str) -> str:
    if style not in SOLUTION_STYLES:
        raise ValueError(f"style must be one of {SOLUTION_STYLES}, got {style!r}")
    if style == "plain":
        return f"Step {i}: {a} {op} {b} = {c}"
    return f"Step {i}: " + worked_equation(a, op, b, c, split_division=style == "worked+division")
