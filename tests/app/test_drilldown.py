"""The one drill-down mechanism (app/figures/clickable.py `Pickable`, app/ui/drilldown.py `Drilldown`): customdata
encoded by a chart reads back as the same pick, a crafted point picks nothing, and the pick is remembered per
drill-down with each chart's selection acted on once (AppTest cannot fire a Plotly selection, so this is tested
here on a plain dict as session state)."""
from types import SimpleNamespace

import numpy as np
import pytest

from app.figures.clickable import HEAD, Pickable, Picked
from app.ui import drilldown
from app.ui.drilldown import Clicked, Drilldown, selected_points, within

NODE = Pickable("node", ("layer", "position", "stage"), text=("stage",))
EDGE = Pickable("edge", ("edge",))


@pytest.fixture
def state(monkeypatch) -> dict:
    """Session state as a plain dict (the helper only gets, sets and pops keys)."""
    session = {}
    monkeypatch.setattr(drilldown, "st", SimpleNamespace(session_state=session))
    return session


def chart(key: str, *customdata) -> Clicked:
    """What `clickable_chart` returns for a chart with these points selected."""
    return Clicked.of(key, {"selection": {"points": [{"x": 0, "customdata": c} for c in customdata],
                                          "point_indices": [], "box": [], "lasso": []}})


def test_encode_read_round_trip():
    row = HEAD.encode(np.int64(3), 1, extras=(np.float32(0.5), "L3H1"))
    assert row == ["head", 3, 1, 0.5, "L3H1"] and type(row[1]) is int and type(row[3]) is float  # JSON-ready
    assert HEAD.read(row) == Picked("head", (3, 1)) == HEAD.of(3, 1)
    assert NODE.read(NODE.encode(2, 5, "mid")) == NODE.of(2, 5, "mid")
    rows = NODE.rows(np.array([0, 1]), [4, 5], ["post", "mid"], extras=(["a", "b"],))
    assert rows == [["node", 0, 4, "post", "a"], ["node", 1, 5, "mid", "b"]]
    assert [NODE.read(r) for r in rows] == [NODE.of(0, 4, "post"), NODE.of(1, 5, "mid")]
    assert HEAD.read(("head", 1.0, 2.0)) == HEAD.of(1, 2)  # whole floats, as JSON may carry them
    with pytest.raises(ValueError):
        HEAD.encode(1)


def test_a_crafted_or_foreign_point_picks_nothing():
    """The event comes from the browser: only a point of the declared kind with well-formed fields picks."""
    crafted = [None, "head", 3, {"0": "head", "1": 1, "2": 2}, [], ["head", 1], ["edge", 1, 2], ["node", 1, 2],
               ["head", 1, -1], ["head", 1, 0.5], ["head", "1", 0], ["head", True, 0], ["head", 1, float("nan")],
               ["head", 1, float("inf")], ["head", [1], 0], ["head", None, 0]]
    for data in crafted:
        assert HEAD.read(data) is None, data
    assert NODE.read(["node", 1, 2, 3]) is None, "a text field holds text"
    assert EDGE.read(NODE.encode(1, 2, "mid")) is None and NODE.read(EDGE.encode(0)) is None


def test_selected_points_tolerates_empty_and_odd_events():
    assert selected_points(None) == [] and selected_points({}) == [] and selected_points({"selection": None}) == []
    assert selected_points({"selection": {"points": [1, {"x": 2}]}}) == [{"x": 2}]
    assert Clicked.of("c", None) == Clicked("c", ())


def test_a_new_selection_picks_and_a_rerun_keeps_it(state):
    heads = Drilldown("fp8-head", (HEAD,))
    assert heads.key == "fp8-head-pick" and heads.seen_key("fp8-heatmap") == "fp8-head-seen-fp8-heatmap"
    assert heads.pick(chart("fp8-heatmap")) is None
    assert heads.pick(chart("fp8-heatmap", ["head", 1, 2])) == HEAD.of(1, 2)
    assert state[heads.key] == HEAD.of(1, 2)
    assert heads.pick(chart("fp8-heatmap", ["head", 1, 2])) == HEAD.of(1, 2)  # the same selection, rerun
    assert heads.pick() == HEAD.of(1, 2)  # no chart drawn (another tab): the pick stays
    # several points selected: the last that reads and fits wins
    fits = within(2, 4)
    assert heads.pick(chart("fp8-heatmap", ["head", 0, 1], ["head", 9, 9], ["x"]), fits=fits) == HEAD.of(0, 1)


def test_a_selection_already_acted_on_is_not_reapplied(state):
    """The chart's selection survives reruns: after a pick by another route (a click in a text) or on another
    chart, the old selection does not take the drill-down back."""
    sentences = Drilldown("wm-sentence", (Pickable("sentence", ("sentence",)),))
    bar_two = chart("wm-sentences", ["sentence", 2])
    assert sentences.pick(bar_two).values == (2,)
    sentences.choose(Picked("sentence", (5,)))  # a click on sentence 5 in the text
    assert sentences.pick(bar_two).values == (5,), "the bar's old selection was re-applied"
    assert sentences.new_pick(bar_two) is None
    assert sentences.pick(chart("wm-sentences", ["sentence", 3])).values == (3,)  # a new bar picks again
    assert sentences.new_pick(chart("wm-sentences")) is None and sentences.pick().values == (3,)  # deselected


def test_each_chart_of_a_drilldown_has_its_own_seen_selection(state):
    """Two charts open one drill-down (NAG's graph and profile): the newer selection wins, whichever chart."""
    neurons = Drilldown("nag-drill-neuron", (HEAD,))
    graph, profile = chart("nag-graph", ["head", 0, 7]), chart("nag-heatmap", ["head", 1, 3])
    assert neurons.pick(graph) == HEAD.of(0, 7)
    assert neurons.pick(profile) == HEAD.of(1, 3)
    assert neurons.pick(graph) == HEAD.of(1, 3), "the graph's selection was already acted on"
    assert neurons.pick(graph, chart("nag-heatmap", ["head", 1, 4])) == HEAD.of(1, 4)
    assert neurons.new_pick(graph, chart("nag-heatmap", ["head", 1, 4])) is None


def test_a_click_on_another_subplot_opens_the_point_it_added(state):
    """A chart of two maps keeps a selected point on each: the click's own point opens, not the last listed (a
    click back on the first map after one on the second had opened the second map's head again)."""
    heads = Drilldown("mt-drill-head", (HEAD,))
    left, right = ["head", 0, 0], ["head", 17, 3]
    assert heads.pick(chart("mt-heat", left)) == HEAD.of(0, 0)
    assert heads.pick(chart("mt-heat", left, right)) == HEAD.of(17, 3)
    assert heads.pick(chart("mt-heat", ["head", 2, 1], right)) == HEAD.of(2, 1)
    assert heads.pick(chart("mt-heat", ["head", 2, 1], right)) == HEAD.of(2, 1)  # a rerun keeps it
    assert heads.new_pick(chart("mt-heat", ["head", 2, 1])) is None, "a deselected point picks nothing"
    assert heads.pick() == HEAD.of(2, 1)


def test_drilldowns_remember_their_own_picks(state):
    a, b = Drilldown("a", (HEAD,)), Drilldown("b", (HEAD,))
    a.pick(chart("shared", ["head", 1, 1]))
    assert b.pick() is None, "one drill-down's pick is not another's"
    assert b.pick(chart("shared", ["head", 1, 1])) == HEAD.of(1, 1), "nor is its seen selection"
    a.forget()
    assert a.pick() is None and b.pick() == HEAD.of(1, 1)


def test_a_pick_is_valid_only_where_it_fits_and_in_its_context(state):
    graph = Drilldown("inspect-graph", (NODE, EDGE))
    picked = graph.pick(chart("map", ["edge", 4]), context=("prompt", 9))
    assert picked == EDGE.of(4, context=("prompt", 9))
    assert graph.pick(context=("prompt", 9)) == picked
    assert graph.pick(context=("another prompt", 9)) is None  # drawn for another prompt: nothing open
    assert graph.pick(chart("map", ["node", 1, 2, "mid"]), context="p") == NODE.of(1, 2, "mid", context="p")
    heads = Drilldown("heads", (HEAD,))
    assert heads.pick(chart("c", ["head", 3, 0]), fits=within(2, 4)) is None  # out of range: no pick
    assert heads.pick(chart("c", ["head", 1, 3]), fits=within(2, 4)) == HEAD.of(1, 3)
    assert heads.pick(fits=within(1, 4)) is None  # another model: the old pick no longer fits
    state[heads.key] = EDGE.of(1)
    assert heads.pick() is None, "a pick of a kind the drill-down does not open"
    state[heads.key] = (1, 3)
    assert heads.pick() is None, "anything else under the key"


def test_with_nothing_to_open_the_drill_down_says_how_to_open_something(monkeypatch):
    captions = []
    monkeypatch.setattr(drilldown, "st", SimpleNamespace(session_state={}, caption=captions.append))
    heads = Drilldown("heads", (HEAD,))
    assert heads.pick_or_hint(hint="Click a head.") is None and captions == ["Click a head."]
    assert heads.pick_or_hint(chart("c", ["head", 1, 3]), hint="Click a head.") == HEAD.of(1, 3)
    assert captions == ["Click a head."], "an open pick shows no hint"
    assert heads.pick_or_hint(fits=within(1, 4), hint="Click a head.") is None  # no longer fits: the hint again
    assert captions == ["Click a head."] * 2


def test_within_checks_every_index():
    fits = within(2, 4)
    assert fits(HEAD.of(1, 3)) and not fits(HEAD.of(2, 0)) and not fits(HEAD.of(1, 4))
    assert not fits(HEAD.of(1)) and not fits(HEAD.of(-1, 0)) and not fits(NODE.of(1, 2, "mid"))
