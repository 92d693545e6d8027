"""The per-layer figure: bounds over utilisation on one layer axis, or the bounds alone without sample texts."""
import numpy as np

from app.figures.fp8 import layer_bounds_figure
from backend.fp8.bounds import BoundsConfig, compute_bounds


def test_per_layer_figure_shows_bounds_observed_and_utilisation_on_a_shared_layer_axis(tiny_handle):
    result = compute_bounds(tiny_handle, BoundsConfig(n_texts=2))
    fig = layer_bounds_figure(result)
    names = [t.name for t in fig.data]
    assert names == ["rank-aware bound", "rotation-safe bound", "observed max |S|", "utilisation"]
    observed, utilisation = fig.data[2], fig.data[3]
    assert np.allclose(observed.y, result.observed_layer)
    assert np.allclose(utilisation.y, 100 * result.utilisation) and utilisation.xaxis == "x2"
    assert fig.layout.xaxis.matches == "x2" or fig.layout.xaxis2.matches == "x", "one layer axis for both panels"
    assert max(utilisation.y) <= 100, "no observed logit above its bound"


def test_without_sample_texts_the_figure_has_the_bounds_only(tiny_handle):
    fig = layer_bounds_figure(compute_bounds(tiny_handle, BoundsConfig(n_texts=0)))
    assert [t.name for t in fig.data] == ["rank-aware bound", "rotation-safe bound"]
    assert "xaxis2" not in fig.layout.to_plotly_json()


def _head(observed_max: float = 6.5, layer_bound: float = 40.0, bound: float = 38.0):
    from backend.fp8.head import HeadResult

    edges = np.linspace(-observed_max, observed_max, 11)
    return HeadResult("m", 1, 2, 0, 1.5, bound, bound, bound * 1.2, layer_bound, 448.0, "e4m3",
                      np.array([1, 4, 30, 200, 2000, 2500, 300, 20, 3, 1]), edges, 5059, observed_max, -observed_max,
                      observed_max, 0.0, 1.0, 4.0)


def test_head_histogram_labels_each_line_once_inside_the_chart_on_its_own_row():
    from app.figures.fp8 import head_histogram
    from tests.app.test_figure_axes import whole_labels

    fig = head_histogram(_head())
    notes = fig.layout.annotations
    # Plotly writes "new text" for an annotation without text: the negative lines carried one each
    assert [a.text.split(" ")[0] for a in notes] == ["bound", "layer", "observed"] and all(a.text for a in notes)
    low, high = fig.layout.xaxis.range
    for note in notes:  # each label ends at its line, inside the axis (right of the layer bound it was cut off)
        assert note.xanchor == "right" and low < note.x <= high
    assert len({round(a.y, 3) for a in notes}) == 3, "labels of close values on one row overlapped"
    assert whole_labels(fig.layout.yaxis)
    assert sum(s.type == "line" for s in fig.layout.shapes) == 6  # every line at -value and +value


def test_per_layer_and_transient_log_axes_label_whole_values(tiny_handle):
    from tests.app.test_figure_axes import whole_labels

    fig = layer_bounds_figure(compute_bounds(tiny_handle, BoundsConfig(n_texts=2)))
    assert whole_labels(fig.layout.yaxis)
