"""The rule every generated problem's steps keep, shared by the classic templates and the broad family."""
from __future__ import annotations


def worked_step(a: int, op: str, b: int, max_value: int) -> tuple[int, bool]:
    """a op b, and whether the step keeps the rules: exact division, every value in 0..max_value."""
    if op == "/":
        c, ok = (a // b if b else 0), b != 0 and a % b == 0
    else:
        c, ok = (a + b if op == "+" else a - b if op == "-" else a * b), True
    return c, ok and all(0 <= v <= max_value for v in (a, b, c))
