"""Accuracy curves carry Wilson 95% intervals computed from each setting's scored count."""
import pandas as pd

from app.figures.decoding import accuracy_curves
from backend.significance import wilson_interval


def _summary(**extra) -> pd.DataFrame:
    rows = [{"label": "Greedy", "strategy": "greedy", "budget": 1, "problems": 40, "accuracy": 0.5,
             "mean_tokens": 36.0, "p95_latency_s": 2.0},
            {"label": "ASMC x4", "strategy": "asmc", "budget": 4, "problems": 40, "accuracy": 0.6,
             "mean_tokens": 140.0, "p95_latency_s": 6.0}]
    return pd.DataFrame([{**row, **extra} for row in rows])


def test_accuracy_points_have_their_wilson_interval_as_bars():
    fig = accuracy_curves(_summary())
    greedy = next(t for t in fig.data if t.name == "greedy")
    low, high = wilson_interval(20, 40)
    assert greedy.error_y.array[0] == high - 0.5 and greedy.error_y.arrayminus[0] == 0.5 - low
    assert f"{low:.0%}-{high:.0%}" in list(greedy.customdata[0])


def test_the_scored_count_is_used_when_some_problems_had_no_checker():
    fig = accuracy_curves(_summary(checked=10))
    low, high = wilson_interval(5, 10)
    assert next(t for t in fig.data if t.name == "greedy").error_y.array[0] == high - 0.5


def test_latency_curves_have_no_interval_bars():
    assert all(t.error_y.array is None for t in accuracy_curves(_summary(), "p95_latency_s").data)
