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
