"""NAG figures from hand-made results (no model, no Streamlit)."""
import numpy as np

from app.figures.nag import (deactivation_figure, distance_histogram, graph_figure, precision_figure,
                             profile_concentration, profile_heatmap)
from backend.nag import Comparison, Deactivation, RankConfig, Ranking, build_graph
from tests.nag.test_graph_and_deactivation import _profiles


def test_every_figure_builds():
    ranking = Ranking("m", RankConfig(), ("x",), ("a", "b", "c"), ("x", "y", "x"), ("p", "q", "r"),
                      np.array([3, 4, 5]), np.array([[0.9, 0.1, 0.5]]), np.array([[0.1, 0.9, 0.5]]),
                      np.array([0, -1, -1]), np.array([0, 2, 1]), 4, (3,), 0)
    assert len(distance_histogram(ranking).data) == 2
    assert ranking.to_frame()["id"].tolist() == ["a", "c", "b"]
    profiles = _profiles()
    assert profile_heatmap(profiles).data[0].z.shape == (3, 4)
    assert len(profile_concentration(profiles).data) == 1
    assert len(graph_figure(build_graph(profiles)).data) >= 2
    comparison = Comparison("m", ("x",), ("nag", "random"), (1, 2), np.array([[1.0, 0.5], [0.0, 0.5]]), 2)
    assert len(precision_figure(comparison).data) == 2
    deact = Deactivation("m", "x", ("x", "y"), np.array([1.0, 1.0]), np.array([1.5, 1.1]),
                         np.array([[1.05, 1.0], [1.1, 1.02]]), np.zeros((3, 1), dtype=int), 1, 0.01)
    assert deactivation_figure(deact).data[0].y.tolist() == [0.5, 0.10000000000000009]
    assert deact.summary()["ratio_target"] > 3


def test_the_neuron_activation_histogram_labels_whole_counts():
    from app.figures.nag_neuron import activation_histogram
    from backend.nag.neuron import NeuronConfig, NeuronDetail
    from tests.app.test_figure_axes import whole_labels

    counts = np.array([3000, 800, 120, 9, 2, 1])
    detail = NeuronDetail("m", NeuronConfig(), 4, int(counts.sum()), (), counts, np.linspace(-1, 2, 7), (), (), ())
    assert whole_labels(activation_histogram(detail).layout.yaxis)
