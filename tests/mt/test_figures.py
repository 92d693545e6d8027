"""The page's figures are pure functions of results."""
import numpy as np
import pandas as pd

from app.figures.mt import ablation_chart, evaluation_bars, head_heatmaps
from backend.mt.heads import HeadMap, HeadsConfig


def _head_map() -> HeadMap:
    rng = np.random.default_rng(0)
    patch = rng.normal(size=(30, 9))
    return HeadMap("m", HeadsConfig(), patch, patch + rng.normal(scale=0.1, size=patch.shape), 0.9,
                   np.zeros((30, 9, 4), dtype=np.float32), (1, 2), (0, 1), ("a", "b"), (0.1, 0.2), (-1.0, -2.0),
                   (-3.0, -4.0), "de", 1.0, 0.1)


def test_heatmaps_show_both_maps_mark_the_selected_heads_and_hover_layer_head_score():
    hm = _head_map()
    fig = head_heatmaps(hm, 1.0, ("patching", "attribution"))
    patch, patch_ring, attr, attr_ring, *_ = fig.data
    assert np.array_equal(np.asarray(patch.z), hm.patching) and np.array_equal(np.asarray(attr.z), hm.attribution)
    assert (patch.xaxis, attr.xaxis) == ("x", "x2"), "side by side, one subplot each"
    assert "layer" in patch.hovertemplate and "head" in patch.hovertemplate and "score" in patch.hovertemplate
    for ring in (patch_ring, attr_ring):
        assert list(zip(ring.y, ring.x)) == list(hm.selected(1.0)) and len(ring.x) == 3


def test_the_third_panel_plots_every_head_patching_vs_attribution_with_the_rank_correlation():
    hm = _head_map()
    fig = head_heatmaps(hm, 1.0, ("patching", "attribution"))
    points = [t for t in fig.data if t.type == "scatter" and t.xaxis == "x3"]
    assert sum(len(t.x) for t in points) == 270
    assert sorted(x for t in points for x in t.x) == sorted(hm.patching.ravel())
    assert "0.90" in fig.layout.annotations[2].text


def test_evaluation_and_ablation_charts():
    table = pd.DataFrame({"condition": ["instruction", "few-shot"], "chrF++": [20.0, 25.0],
                          "target-language rate": [0.9, 0.8]})
    assert len(evaluation_bars(table).data) == 2
    rows = pd.DataFrame({"group": ["baseline", "selected", "random", "random"], "condition": list("abcd"),
                         "rate": [0.9, 0.3, 0.85, 0.8], "chrf": [20, 10, 19, 18]})
    fig = ablation_chart(rows)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 6 and bars[2].error_y.array[0] > 0


def test_head_vocabulary_effects_legend_names_only_the_colours():
    """The data bar had no name: the legend showed a stray "trace 0" beside the colours' entries."""
    from app.figures.mt_head import LANGUAGE_COLOURS, vocab_effects
    from backend.mt.head_detail import HeadDetail, HeadDetailConfig, VocabEffect

    effects = tuple(VocabEffect(f"t{i}", i, 1.0 - i, lang) for i, lang in enumerate(["target", "source", ""]))
    detail = HeadDetail("m", HeadDetailConfig(), ("a", "b"), "b", np.array([0.4, 0.6]), effects, effects[::-1], 0.3,
                        1.0, (0,), ("b",), (0.1,))
    fig = vocab_effects(detail)
    in_legend = [t.name for t in fig.data if t.showlegend is not False]
    assert in_legend == [side or "neither" for side in LANGUAGE_COLOURS]
