"""Log axes label whole values (issue 54 §4: Plotly's own ticks over a few decades read "2, 1000, 5, 2, 100")."""
import numpy as np
import pandas as pd

from app.figures.axes import log_axis
from app.figures.runs import runs_timeline


def whole_labels(axis) -> bool:
    """Every label a log axis shows is a value written out: decades only (dtick 1), or explicit ticks whose text is
    the tick's own value."""
    if axis.type != "log":
        return False
    if axis.dtick == 1:
        return True
    return axis.tickvals is not None and all(float(t) == v for t, v in zip(axis.ticktext, axis.tickvals))


def test_several_decades_are_labelled_at_the_decades_only():
    axis = log_axis([0.003, 40.0, 2500.0])
    assert axis["type"] == "log" and axis["dtick"] == 1


def test_within_a_decade_the_ticks_are_written_out_and_around_the_data():
    axis = log_axis(np.array([120.0, 700.0]))
    assert axis["ticktext"] == ["100", "200", "500", "1000"]
    assert axis["tickvals"] == [100.0, 200.0, 500.0, 1000.0]


def test_no_positive_values_leave_plotly_its_own_ticks():
    assert log_axis([0.0, np.nan], title="t") == {"type": "log", "title": "t"}


def test_the_runs_timeline_labels_whole_values():
    runs = pd.DataFrame({"feature": ["fp8", "nag", "fp8"], "seconds": [0.004, 2.0, 180.0], "cached": [True, False, False],
                         "created": pd.to_datetime(["2025-01-01", "2025-01-02", "2025-01-03"]),
                         "run_id": ["a", "b", "c"], "action": ["bounds", "rank", "bounds"], "model_id": ["m"] * 3})
    assert whole_labels(runs_timeline(runs).layout.yaxis)
