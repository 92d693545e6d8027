"""A click on an object of a page's first view is a store read: right after a map is drawn the page stores the
drill-down of every object on it in one pass, in the background (app/ui/prepared_drilldowns.py), so the click that
follows is served cached with
nothing computed (Inspect's graph and attribution map, FP8's heatmap, Disagreement's trace). The shipped first views carry theirs:
tests/internals/test_reference.py, tests/fp8/test_reference_drilldowns.py, tests/disagreement/
test_position_reference.py."""
from app.figures.clickable import HEAD
from app.figures.disagreement import POSITION
from app.figures.inspect_graph import NODE
from app.ui.disagreement_position import DIS_POSITION
from app.ui.fp8_head import FP8_HEAD
from app.ui.inspect_graph import GRAPH_ITEM
from app.ui.inspect_patch import DLA_HEAD
from backend.internals import EXAMPLE_PROMPT
from backend.models import load
from backend.store.runs import list_runs
from tests.app.helpers import open_tab, run_page
from tests.support.waiting import wait_until


def _boxes(at) -> list[str]:
    """The status boxes of this run: '<label>: <provenance>'."""
    return [box.proto.label for box in at.get("status")]


def _prepared(at) -> int:
    """Waits for this session's drill-down preparations (app.ui.prepared_drilldowns) to end; how many there were."""
    runs = at.session_state["background-runs"] if "background-runs" in at.session_state else {}
    preparations = [run for key, run in runs.items() if "prepare" in key]
    for run in preparations:
        wait_until(lambda: not run.running, 300, "the preparation to end")
        assert not run.error and not run.stopped, run.error or run.stopped
    return len(preparations)


def _computed(action: str) -> int:
    runs = list_runs()
    return int(((runs["action"] == action) & ~runs["cached"]).sum())


def test_inspect_first_view_clicks_are_store_reads(fresh_store):
    at = run_page("inspect.py")
    assert _prepared(at) == 1, "the graph's states and heads prepared"
    last = len(load("tiny-llama").tokenizer(EXAMPLE_PROMPT)["input_ids"]) - 1
    at.session_state[GRAPH_ITEM.key] = NODE.of(2, last, "post", context=(EXAMPLE_PROMPT, last, False))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "State drill-down: cached" in _boxes(at)
    open_tab(at, "inspect-tabs", "Direct logit attribution")
    assert _prepared(at) == 2, "the map's heads prepared"
    at.session_state[DLA_HEAD.key] = HEAD.of(1, 2, context=EXAMPLE_PROMPT)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Head drill-down: cached" in _boxes(at)
    assert _computed("head") == 0 and _computed("node") == 0, "no click computed a drill-down"


def test_fp8_first_view_clicks_are_store_reads(fresh_store):
    at = run_page("fp8_bounds.py")
    assert _prepared(at) == 1
    for layer, head in ((1, 2), (0, 3)):
        at.session_state[FP8_HEAD.key] = HEAD.of(layer, head)
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert f"Head {layer}.{head}: cached" in _boxes(at)
    runs = list_runs()
    assert not ((runs["feature"] == "fp8") & (runs["action"] == "head") & ~runs["cached"]).any()


def test_disagreement_first_view_clicks_are_store_reads(fresh_store):
    at = run_page("disagreement.py", state={"dis-max-new": 16})
    assert _prepared(at) == 1
    for i in (3, 0):
        at.session_state[DIS_POSITION.key] = POSITION.of(i, context="base")
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert any(s.value == f"Position {i} of the base rollout" for s in at.subheader)
    runs = list_runs()
    clicks = runs[(runs["feature"] == "disagreement") & (runs["action"] == "position")]
    assert len(clicks) == 2 and clicks["cached"].all(), "the clicks were store reads"
