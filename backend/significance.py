"""Small-sample statistics for accuracies measured on a few dozen problems.

A benchmark here scores tens of problems, so a 6-point difference can be noise. Two tools say how much:
the Wilson score interval for one accuracy (well behaved at 0% and 100%, unlike the normal
approximation), and the exact McNemar test for two methods scored on the same problems, which only
counts the problems where they disagree.
"""
from __future__ import annotations

import math
from collections.abc import Mapping


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% for z = 1.96); (0, 1) when nothing was scored."""
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value: under "no difference" each discordant problem is a fair coin."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def discordant(a: Mapping[str, bool], b: Mapping[str, bool]) -> tuple[int, int]:
    """(only a right, only b right) over the problems both scored: what McNemar's test counts."""
    shared = a.keys() & b.keys()
    return sum(a[i] and not b[i] for i in shared), sum(b[i] and not a[i] for i in shared)


def format_p(p: float | None) -> str:
    """A p-value as a researcher reads it: two significant digits, scientific notation once it is small
    ("0.016", "9.3e-10"), "< 1e-300" where it underflowed, "–" when there is none. For display only: tables
    and exports keep the full-precision number."""
    if p is None or p != p:
        return "–"
    if p < 1e-300:
        return "< 1e-300"
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"
