"""What a click on each page's clickable charts opens: every clickable point of the drawn figure reads, through
the page's `Drilldown`, to the object it is drawn at, and a pick outside the shown result opens nothing (AppTest
cannot fire a Plotly selection, so the figure -> pick contract is tested here; each page's AppTest opens a pick)."""
from types import SimpleNamespace

import numpy as np
import pytest

from app.figures.clickable import HEAD
from app.ui.drilldown import Clicked, Drilldown, within


def picks(drill: Drilldown, trace, fits) -> list:
    """The pick a click on each point of `trace` makes (None where it picks nothing)."""
    return [drill.read(Clicked("chart", ({"customdata": c},)), fits) for c in trace.customdata]


@pytest.fixture(scope="module")
def bounds_result():
    from backend.fp8.bounds import BoundsConfig, compute_bounds
    from backend.models import load

    return compute_bounds(load("tiny-llama"), BoundsConfig(n_texts=2))


def test_fp8_a_head_cell_opens_that_head_and_a_layer_its_largest_bound(bounds_result):
    from app.figures.fp8 import head_heatmap, layer_bounds_figure
    from app.ui.fp8_head import FP8_HEAD

    result = bounds_result
    fits = within(*result.bound.shape)
    heatmap, markers = head_heatmap(result).data
    assert markers.hovertemplate.count("customdata") == 2 and "(kv %{customdata[3]})" in markers.hovertemplate
    assert picks(FP8_HEAD, markers, fits) == [HEAD.of(y, x) for x, y in zip(markers.x, markers.y)]
    largest = result.bound.argmax(axis=1)
    for trace in layer_bounds_figure(result).data:  # bounds, observed, utilisation: each layer's point
        assert picks(FP8_HEAD, trace, fits) == [HEAD.of(x, largest[x]) for x in trace.x], trace.name
    n_layers, n_heads = result.bound.shape
    assert FP8_HEAD.read(Clicked("c", ({"customdata": ["head", n_layers, 0]},)), fits) is None  # another model's


def test_disagreement_a_point_of_any_curve_opens_its_position():
    from app.figures.disagreement import trace_figure
    from app.ui.disagreement_position import DIS_POSITION

    rollout = SimpleNamespace(length=4, tokens=["a", " b", "<c>", "d"], source="base",
                              signals={"ce": np.array([0.1, 0.4, 0.2, 0.3]), "js": np.zeros(4)})
    fig = trace_figure(rollout, ("ce", "js"), highlight="ce", top_n=2)
    for trace in fig.data:
        assert picks(DIS_POSITION, trace, within(4)) == [DIS_POSITION.opens[0].of(x) for x in trace.x]
    assert "%{customdata[2]}" in fig.data[0].hovertemplate
    assert fig.data[0].customdata[2][2] == "&lt;c&gt;"  # the token on hover, as data
    assert picks(DIS_POSITION, fig.data[0], within(3))[3] is None  # a shorter rollout


def test_decoding_the_ess_chart_opens_a_step_and_the_genealogy_a_particle():
    from app.figures.decoding import PARTICLE, STEP, ess_over_time, genealogy
    from app.ui.decoding_particle import DEC_PARTICLE, fits_run
    from backend.decoding.config import DecodeConfig
    from backend.decoding.result import DecodeResult
    from tests.decoding.test_figures import _particles

    rounds = (_particles(2, [False, True, False]), _particles(3, [False, False]))
    result = DecodeResult("asmc", DecodeConfig(), "m", "p", "q", "", (), None, None, None, 0, 0, 0.0,
                          particles=rounds)
    fits = fits_run([(p.genealogy.shape[0], p.n) for p in rounds])
    line, marks, *_ = ess_over_time(result).data
    assert picks(DEC_PARTICLE, line, fits) == [STEP.of(0, x - 1) for x in line.x]  # x counts tokens from 1
    assert picks(DEC_PARTICLE, marks, fits) == [STEP.of(0, 1)] and "%{customdata[3]}" in marks.hovertemplate
    nodes = genealogy(result, 1).data[-1]
    assert picks(DEC_PARTICLE, nodes, fits) == [PARTICLE.of(1, x - 1, y) for x, y in zip(nodes.x, nodes.y)]
    for outside in (PARTICLE.of(0, 0, 2), PARTICLE.of(1, 2, 0), STEP.of(2, 0), STEP.of(0, 3)):
        assert not fits(outside), outside  # round 0 has 2 particles, round 1 two steps, there is no round 2
    assert fits(PARTICLE.of(1, 1, 2)) and fits(STEP.of(1, 1))


def test_watermark_a_sentence_bar_opens_its_row():
    from app.figures.watermark import sentence_contributions
    from app.ui.watermark_sentence import WM_SENTENCE

    rows = [SimpleNamespace(index=i, text=f"s{i}", level=level, sem_bit=1, syn_bit=0, contribution=0.5)
            for i, level in enumerate(("model", "", "user"))]
    bars = sentence_contributions(rows).data[0]
    assert picks(WM_SENTENCE, bars, within(3)) == [WM_SENTENCE.opens[0].of(i) for i in range(3)]
    assert list(bars.x) == [1, 2, 3] and bars.customdata[1][2] == "unusable"  # numbered from 1, as the table


def test_mt_either_map_and_the_scatter_open_the_head():
    from app.figures.mt import head_heatmaps
    from app.ui.mt_drilldown import MT_HEAD
    from tests.mt.test_figures import _head_map

    head_map = _head_map()
    n_layers, n_heads = head_map.patching.shape
    fig = head_heatmaps(head_map, 1.0, ("patching", "attribution"))
    clickable = [t for t in fig.data if t.customdata is not None]
    assert len(clickable) == 4, "the scatter's two groups and the two maps' click layers"
    head_at = {score: divmod(i, n_heads) for i, score in enumerate(head_map.patching.ravel())}  # the scatter's x
    for trace in clickable:
        drawn = [head_at[x] if trace.xaxis == "x3" else (y, x) for x, y in zip(trace.x, trace.y)]
        assert picks(MT_HEAD, trace, within(n_layers, n_heads)) == [HEAD.of(*h) for h in drawn]


def test_nag_the_profile_cell_and_the_graph_node_open_the_neuron():
    from app.figures.nag import NEURON, graph_figure, profile_heatmap
    from app.ui.nag_drilldown import NAG_NEURON
    from backend.nag import build_graph
    from tests.nag.test_graph_and_deactivation import _profiles

    profiles = _profiles()
    heat = profile_heatmap(profiles).data[-1]
    order = np.argsort(-profiles.weights[0], axis=1, kind="stable")
    assert picks(NAG_NEURON, heat, within(3, 4)) == [NEURON.of(y, order[y, x - 1]) for x, y in zip(heat.x, heat.y)]
    graph = build_graph(profiles)
    nodes = graph_figure(graph).data[-1]
    assert picks(NAG_NEURON, nodes, within(3, 4)) == [NEURON.of(*p) for p in zip(graph.layers, graph.neurons)]


def test_inspect_patch_a_cell_opens_its_row_and_column():
    from app.figures.inspect_patch import CELL, patch_figure
    from app.ui.inspect_patch import patch_cells

    values = np.arange(6, dtype=float).reshape(2, 3) / 10
    result = SimpleNamespace(site="head", values=values, target_token=" a", contrast_token=" b")
    layer = patch_figure(result).data[-1]
    assert picks(patch_cells("head"), layer, within(2, 3)) == [CELL.of(y, x) for x, y in zip(layer.x, layer.y)]
    assert layer.customdata[5][3] == "L1 · H2: +0.500" and "%{customdata[3]}" in layer.hovertemplate
    assert patch_cells("head").key != patch_cells("mlp_out").key, "each site keeps its own pick"
