"""AppTest: the Inspect page opens on its example prompt with the contribution graph, whose edges open the head
behind them and whose states open their lens; the lens tab; the attribution tab sums to the logit and a head chosen
on its map opens the drill-down; every head at once; a prompt sent by another page lands in the box; a bad prompt
is one error line."""
import html

from streamlit.testing.v1 import AppTest

from app.figures.clickable import HEAD
from app.figures.inspect_graph import EDGE, NODE
from app.ui.inspect_graph import GRAPH_ITEM
from app.ui.inspect_link import _INCOMING, PROMPT_KEY
from app.ui.inspect_patch import DLA_HEAD
from backend.internals import EXAMPLE_PROMPT
from backend.models import load
from tests.app.helpers import MAIN, ROOT, open_tab, plotly_charts, run_page

DLA = "Direct logit attribution"


def test_opens_on_the_example_prompt_with_the_graph_and_its_drilldowns():
    at = run_page("inspect.py")
    assert not at.error, [e.value for e in at.error]
    assert at.text_area(key=PROMPT_KEY).value == EXAMPLE_PROMPT
    assert len(plotly_charts(at)) == 1 and any("residual states and" in c.value for c in at.caption)
    assert any("Click an edge" in i.value for i in at.info)
    last = len(load("tiny-llama").tokenizer(EXAMPLE_PROMPT)["input_ids"]) - 1
    drawn = (EXAMPLE_PROMPT, last, False)  # the graph's prompt, position and per-head setting
    at.session_state[GRAPH_ITEM.key] = NODE.of(2, 10, "post", context=drawn)  # what a click stores
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value == "State after layer 1, position 10" for s in at.subheader)
    assert len(at.dataframe) == 3, "lens, promoted, suppressed"
    at.session_state[GRAPH_ITEM.key] = EDGE.of(0, context=drawn)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value.startswith("Head L") for s in at.subheader) or any("edge at position" in i.value
                                                                        for i in at.info)


def test_lens_tab():
    at = run_page("inspect.py")
    open_tab(at, "inspect-tabs", "Logit lens")
    assert not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 2, "the lens heatmap and the final-prediction curve"
    assert any("The model predicts" in c.value for c in at.caption)


def test_all_heads_tab():
    at = run_page("inspect.py")
    open_tab(at, "inspect-tabs", "All heads")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 2, "the score map and the layer's grid"
    at.toggle(key="inspect-heads-random").set_value(True).run()
    at.session_state["inspect-grid-head"] = 1
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 3 and any("previous token target over" in c.value for c in at.caption)
    at.toggle(key="inspect-grid-top").set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 3, "the score map, the top heads' grid, the open head"


def test_dla_tab_and_head_drilldown():
    at = run_page("inspect.py")
    open_tab(at, "inspect-tabs", DLA)
    assert not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 2 and any("logit =" in c.value for c in at.caption)
    assert any("Click a head" in i.value for i in at.info)
    at.session_state[DLA_HEAD.key] = HEAD.of(1, 2, context=EXAMPLE_PROMPT)  # what a click on the map stores
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value == "Head L1H2" for s in at.subheader)
    assert len(at.dataframe) == 2 and len(plotly_charts(at)) == 3, "promoted, suppressed and the pattern"
    at.text_area(key=PROMPT_KEY).set_value("A new prompt").run()
    assert not any(s.value.startswith("Head L") for s in at.subheader), "a head chosen on another prompt stays shut"
    assert any("Click a head" in i.value for i in at.info)


def test_a_prompt_sent_from_another_page_is_inspected_and_bad_input_is_one_line():
    at = run_page("inspect.py", state={_INCOMING: "Two plus two is"})
    assert at.text_area(key=PROMPT_KEY).value == "Two plus two is"
    at.text_area(key=PROMPT_KEY).set_value("   ").run()
    assert [html.unescape(e.value) for e in at.error] == ["The prompt is empty: type some text to inspect."]
    open_tab(at, "inspect-tabs", DLA)
    at.text_area(key=PROMPT_KEY).set_value("abc").run()
    at.text_input(key="inspect-target").set_value("xyz").run()
    assert len(at.error) == 1 and "is 3 tokens" in html.unescape(at.error[0].value)


def test_inspect_this_prompt_from_disagreement_opens_inspect_on_its_question():
    at = run_page("disagreement.py")  # opens on a generated held-out problem, shown above the button
    at.button(key="dis-inspect").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Inspect"
    prompt = at.text_area(key=PROMPT_KEY).value
    assert prompt != EXAMPLE_PROMPT and prompt.rstrip().endswith("?"), prompt
    assert len(plotly_charts(at)) == 1


def test_the_prompt_survives_a_visit_to_another_page():
    at = run_page("inspect.py")
    at.text_area(key=PROMPT_KEY).set_value("A river flows into the").run()
    at.switch_page("../pages/fp8_bounds.py").run()
    at.switch_page("../pages/inspect.py").run()
    assert not at.exception
    assert at.text_area(key=PROMPT_KEY).value == "A river flows into the"


def test_a_prompt_over_the_memory_budget_is_refused_at_the_prompt_box(monkeypatch):
    monkeypatch.setenv("DASH_INSPECT_MAX_MB", "0.001")
    at = run_page("inspect.py")
    assert len(at.error) == 1 and "DASH_INSPECT_MAX_MB" in html.unescape(at.error[0].value), [e.value for e in at.error]
    assert not plotly_charts(at), "no tab computes past the prompt box's refusal"
def test_a_link_with_the_prompt_and_tab_reproduces_the_view():
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update({PROMPT_KEY: "A river flows into the", "inspect-tabs": "Attention"})
    at.run()
    at.switch_page(str(ROOT / "pages" / "inspect.py")).run()
    assert not at.exception and not at.error
    assert at.text_area(key=PROMPT_KEY).value == "A river flows into the"
    assert at.session_state["inspect-tabs"] == "Attention" and any("tokens:" in c.value for c in at.caption)


def test_the_chosen_tab_survives_a_visit_to_another_page():
    at = run_page("inspect.py")
    open_tab(at, "inspect-tabs", DLA)
    at.switch_page("../pages/fp8_bounds.py").run()
    at.switch_page("../pages/inspect.py").run()
    assert not at.exception and at.session_state["inspect-tabs"] == DLA
    assert any("logit =" in c.value for c in at.caption)


def test_all_heads_prepares_every_layers_grid_after_the_map(fresh_store):
    """A click on any head of the score map opens its layer's grid: every layer's is prepared after the map (in the
    background), so the click reads the store."""
    from backend.internals import GridConfig, grid
    from tests.support.waiting import wait_until

    at = run_page("inspect.py")
    open_tab(at, "inspect-tabs", "All heads")
    assert not at.exception and not at.error, [e.value for e in at.error]
    runs = at.session_state["background-runs"] if "background-runs" in at.session_state else {}
    (run,) = [r for key, r in runs.items() if key.startswith("inspect-grids-prepare")]
    wait_until(lambda: not run.running, 300, "the grids' preparation to end")
    assert not run.error and not run.stopped
    handle = load("tiny-llama")
    every = [GridConfig(prompt=EXAMPLE_PROMPT, layer=layer) for layer in range(handle.info.n_layers)]
    assert grid.all_stored(handle, every)
