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


def _particles(n: int, resampled: list[bool]):
    import numpy as np

    from backend.decoding.result import ParticleTrace

    steps = len(resampled)
    genealogy = np.tile(np.arange(n), (steps, 1))
    genealogy[1:][np.array(resampled[1:])] = 0  # every row descends from row 0 where it resampled
    return ParticleTrace(n=n, alpha=np.ones(steps), ess=np.full(steps, float(n)), resampled=np.array(resampled),
                         unique_parents=np.full(steps, n), lineages=np.full(steps, 1), genealogy=genealogy,
                         log_weights=np.zeros(n), tokens_generated=n * steps)


def _genealogy(n: int, resampled: list[bool]):
    from app.figures.decoding import genealogy
    from backend.decoding.config import DecodeConfig
    from backend.decoding.result import DecodeResult

    result = DecodeResult("asmc", DecodeConfig(), "m", "p", "q", "", (), None, None, None, 0, 0, 0.0,
                          particles=(_particles(n, resampled),))
    return genealogy(result)


def test_genealogy_ticks_whole_particles_and_counts_events_in_words():
    fig = _genealogy(2, [False, True, False])
    axis = fig.layout.yaxis
    assert axis.tickmode == "linear" and axis.tick0 == 0 and axis.dtick == 1, "ticks at 0.5 / 1.5 on two particles"
    assert "1 resampling event (red)" in fig.layout.title.text
    assert "1 first-token lineage survives" in fig.layout.title.text
    assert "2 resampling events" in _genealogy(2, [False, True, True]).layout.title.text
    assert _genealogy(64, [False, True]).layout.yaxis.dtick == 4  # 16 ticks at most


def test_the_token_axis_of_accuracy_curves_labels_whole_values():
    from tests.app.test_figure_axes import whole_labels

    assert whole_labels(accuracy_curves(_summary()).layout.xaxis)
