"""What a budget sweep's accuracies support, read from its per-problem records.

Each cell is scored on a few dozen problems, so every accuracy gets its Wilson 95% interval, its share
of the base-to-reasoning gap, and a paired test against the random control at the same budget on the
same problems: the exact McNemar test on the problems where exactly one of the two is right. The random
control copies guided's takeover count per problem, so for guided (and the earliest control) this is a
comparison at equal count; the entropy gate spends its own count.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.disagreement.sweep import SweepResult
from backend.significance import discordant, mcnemar_exact, wilson_interval

CONTROL = "random"


@dataclass(frozen=True)
class CellStats:
    policy: str
    budget: float
    rate: float  # realised intervention rate
    scored: int  # problems with a checked answer
    right: int
    accuracy: float
    low: float  # Wilson 95% interval of the accuracy
    high: float
    gap_share: float  # (accuracy - base) / (reasoning - base); NaN without a gap
    only_policy: int  # problems only this policy gets right, against the control at the same budget
    only_control: int
    p_value: float  # exact McNemar against the control; NaN for the control itself or without one


def gap_share(accuracy: float, base: float, reasoning: float) -> float:
    """The share of the base-to-reasoning accuracy gap recovered (NaN when the two models tie)."""
    return (accuracy - base) / (reasoning - base) if reasoning != base else float("nan")


def cell_stats(result: SweepResult, control: str = CONTROL) -> tuple[CellStats, ...]:
    """One row per sweep point, in the points' order."""
    right: dict[tuple[str, float], dict[str, bool]] = {}
    for r in result.records:
        if r.correct is not None:
            right.setdefault((r.policy, r.budget), {})[r.problem_id] = bool(r.correct)
    rows = []
    for point in result.points:
        mine = right.get((point.policy, point.budget), {})
        k, n = sum(mine.values()), len(mine)
        accuracy = k / n if n else float("nan")
        low, high = wilson_interval(k, n)
        theirs = right.get((control, point.budget))
        wins = losses = 0
        p = float("nan")
        if theirs is not None and point.policy != control:
            wins, losses = discordant(mine, theirs)
            p = mcnemar_exact(wins, losses)
        rows.append(CellStats(policy=point.policy, budget=point.budget, rate=point.rate, scored=n, right=k,
                              accuracy=accuracy, low=low, high=high,
                              gap_share=gap_share(accuracy, result.base_accuracy, result.reasoning_accuracy),
                              only_policy=wins, only_control=losses, p_value=p))
    return tuple(rows)
