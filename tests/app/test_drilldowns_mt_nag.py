"""The MT-heads and NAG drill-downs: each page's drill-down section opened by the pick a click stores (what a click
on each chart picks: tests/app/test_drilldown_picks.py, since AppTest cannot click a Plotly chart)."""
import json

import numpy as np
import pytest

from app.figures.clickable import HEAD
from app.figures.nag import NEURON
from app.ui.mt_drilldown import MT_HEAD, steering_share
from app.ui.nag_drilldown import NAG_NEURON
from backend.mt.selection import top_heads
from tests.app.helpers import open_tab, plotly_charts, run_page
from tests.support.waiting import wait_until


def test_steering_share_is_the_smallest_that_includes_the_head():
    scores = np.arange(30 * 9, dtype=float).reshape(30, 9)[::-1]  # layer 0 heads score highest
    for layer, head in ((0, 8), (0, 0), (1, 5)):
        share = steering_share(scores, layer, head)
        assert (layer, head) in top_heads(scores, share)
        assert share == 0.1 or (layer, head) not in top_heads(scores, round(share - 0.1, 1))
    assert steering_share(scores, 1, 3) is None and steering_share(scores, 29, 0) is None  # rank 15 > 14 = 5%


@pytest.fixture(scope="module")
def mt_page():
    return run_page("mt_heads.py", timeout=300)


def _keys(at):
    return [chart.proto.id for chart in plotly_charts(at)]


def test_mt_head_drilldown_opens_on_the_chosen_head(mt_page):
    at = mt_page
    assert any("Click a head" in c.value for c in at.caption)
    spec = json.loads(plotly_charts(at)[0].proto.spec)
    layers = [t for t in spec["data"] if t.get("name") == "click"]
    assert len(layers) == 2 and layers[0]["customdata"][5] == ["head", 1, 1]  # tiny-llama: 2 x 4 heads, cell 5
    at.session_state[MT_HEAD.key] = HEAD.of(1, 2)  # what a click on layer 1, head 2 stores
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Head L1.H2" in m.value for m in at.markdown)
    keys = _keys(at)
    assert sum(k.endswith(("mt-drill-attention", "mt-drill-vocab", "mt-drill-patching")) for k in keys) == 3, keys
    assert any("`o_proj` contribution" in c.value for c in at.caption)


def test_steer_with_this_head_sets_the_steering_share_and_type(mt_page):
    at = mt_page
    best = at.dataframe[0].value.iloc[0]  # the top-heads table: rank 1 is within any head share
    at.session_state[MT_HEAD.key] = HEAD.of(int(best["layer"]), int(best["head"]))
    at.run()
    steer = at.button(key="mt-drill-steer")
    assert not steer.disabled
    steer.click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["mt-percent"] == 0.1  # tiny-llama's 8 heads: any share keeps at least the top head
    assert at.session_state["mt-steer-types"] == [at.session_state["mt-type"]]
    assert at.slider(key="mt-percent").value == 0.1


def test_nag_neuron_drilldown_opens_from_the_graph_and_the_profile():
    at = open_tab(run_page("nag.py"), "nag-tab", "Graph")
    assert any("Click a neuron" in c.value for c in at.caption)
    graph = json.loads(next(c for c in plotly_charts(at) if c.proto.id.endswith("nag-graph")).proto.spec)
    node = next(t for t in graph["data"] if t.get("customdata"))
    picked = NEURON.read(node["customdata"][0])  # what a click on the heaviest node of the first layer stores
    at.session_state[NAG_NEURON.key] = picked
    layer, neuron = picked.values
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(f"Neuron L{layer}.N{neuron}" in m.value for m in at.markdown)
    assert any("<mark" in m.value for m in at.markdown)  # the contexts, the strongest token marked
    assert sum(k.endswith(("nag-graph-drill-hist", "nag-graph-drill-logits")) for k in _keys(at)) == 2
    assert len(at.dataframe) >= 1  # where it fires among the targets
    open_tab(at, "nag-tab", "Profile")
    assert not at.exception and any(f"Neuron L{layer}.N{neuron}" in m.value for m in at.markdown)
    assert sum(k.endswith("nag-heatmap-drill-hist") for k in _keys(at)) == 1


def _preparations(at) -> dict:
    """This session's drill-down preparations (app.ui.prepared_drilldowns), by key."""
    runs = at.session_state["background-runs"] if "background-runs" in at.session_state else {}
    return {key: run for key, run in runs.items() if "prepare" in key}


def test_a_click_after_the_map_is_shown_reads_the_store(fresh_store):
    """The page prepared every head's drill-down right after the map (one pass, in the background): once it has
    ended, a click on a head nobody opened is a store read, no forward. (A store of its own: on a store where an
    earlier session prepared this map there is nothing left to prepare.)"""
    at = run_page("mt_heads.py", timeout=300)
    (run,) = _preparations(at).values()
    assert run.label == "Preparing the drill-downs of the 8 heads"
    wait_until(lambda: not run.running, 300, "the preparation to end")
    assert not run.error and not run.stopped and run.result.computed == 8
    at.session_state[MT_HEAD.key] = HEAD.of(0, 3)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Opening head L0.H3: cached" in [box.label for box in at.status], [box.label for box in at.status]
    assert len(_preparations(at)) == 1  # the rerun found it done: nothing started again


def test_a_graph_tab_prepares_its_neurons_and_a_click_reads_them():
    """The graph's nodes are prepared once it is shown (here or by an earlier session on this store: then nothing
    is left to prepare); a click on a node nobody opened is then a store read."""
    at = open_tab(run_page("nag.py"), "nag-tab", "Graph")
    for run in _preparations(at).values():
        wait_until(lambda: not run.running, 300, "the preparation to end")
        assert not run.error and not run.stopped and len(run.result.values) > 0
    graph = json.loads(next(c for c in plotly_charts(at) if c.proto.id.endswith("nag-graph")).proto.spec)
    node = next(t for t in graph["data"] if t.get("customdata"))
    picked = NEURON.read(node["customdata"][-1])  # the last node of the first layer's trace
    at.session_state[NAG_NEURON.key] = picked
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    layer, neuron = picked.values
    opened = f"Opening neuron L{layer}.N{neuron}: cached"
    assert opened in [box.label for box in at.status], [box.label for box in at.status]


def test_a_click_during_the_preparation_answers_before_it_ends(fresh_store, monkeypatch):
    """A click while the page still prepares every head is not stuck behind it: its own head is computed at once
    (here the preparation is held until the click has answered)."""
    import threading

    import app.ui.mt_drilldown as page

    release, prepare = threading.Event(), page.map_head_details

    def held(*args, **kwargs):
        if threading.current_thread().name.startswith("background-"):  # the preparation, not the store check
            release.wait(300)
        return prepare(*args, **kwargs)

    monkeypatch.setattr(page, "map_head_details", held)
    try:
        at = run_page("mt_heads.py", timeout=300)
        (run,) = _preparations(at).values()
        assert run.running
        at.session_state[MT_HEAD.key] = HEAD.of(1, 2)
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert any("Head L1.H2" in m.value for m in at.markdown)
        assert sum(k.endswith("mt-drill-patching") for k in _keys(at)) == 1
        assert run.running  # answered while the preparation was still held
    finally:
        release.set()
    wait_until(lambda: not run.running, 300, "the preparation to end")
    assert not run.error and run.result.computed == 7  # the clicked head was already stored
