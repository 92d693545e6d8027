"""Sweep statistics from per-problem records: intervals, gap share, the paired test against random."""
import math

import pytest

from backend.disagreement.sweep import SweepPoint, SweepRecord, SweepResult
from backend.disagreement.sweep_stats import cell_stats, gap_share
from backend.significance import mcnemar_exact, wilson_interval


def _records(policy: str, budget: float, correct: list) -> list[SweepRecord]:
    return [SweepRecord(f"p{i}", policy, budget, ok, 2, 10, 10, 10) for i, ok in enumerate(correct)]


def _point(policy: str, budget: float) -> SweepPoint:
    return SweepPoint(policy, budget, float("nan"), 0.2, 10.0, float("nan"), float("nan"))


def _result() -> SweepResult:
    guided = [True] * 6 + [False] * 4  # p0-p5 right
    random = [True, False, False, False, False, False, True, False, False, None]  # p0, p6 right; p9 unscored
    records = _records("guided", 0.1, guided) + _records("random", 0.1, random)
    return SweepResult(10, 0.0, 0.8, (_point("guided", 0.1), _point("random", 0.1)), tuple(records), ())


def test_each_cell_gets_its_interval_and_gap_share_from_the_records():
    guided, random = cell_stats(_result())
    assert (guided.right, guided.scored, guided.accuracy) == (6, 10, 0.6)
    assert (guided.low, guided.high) == wilson_interval(6, 10)
    assert guided.gap_share == pytest.approx(0.75)
    assert (random.right, random.scored) == (2, 9)  # the unscored problem counts in neither


def test_guided_is_paired_with_random_on_the_problems_both_scored():
    guided, random = cell_stats(_result())
    # p1-p5 only guided; p6 only random; p9 is unscored under random, so it is left out of the pairing
    assert (guided.only_policy, guided.only_control) == (5, 1)
    assert guided.p_value == mcnemar_exact(5, 1)
    assert math.isnan(random.p_value) and (random.only_policy, random.only_control) == (0, 0)


def test_without_a_control_or_a_gap_the_numbers_say_so():
    result = _result()
    alone = SweepResult(10, 0.5, 0.5, result.points[:1], tuple(r for r in result.records if r.policy == "guided"), ())
    (guided,) = cell_stats(alone)
    assert math.isnan(guided.p_value) and math.isnan(guided.gap_share)
    assert math.isnan(gap_share(0.3, 0.2, 0.2)) and gap_share(0.3, 0.2, 0.4) == pytest.approx(0.5)
