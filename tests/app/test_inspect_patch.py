"""AppTest: Inspect's Patch tab draws the patching map, a chosen cell shows the patched run's top tokens beside the
clean and corrupted ones, and its links open Ablate and Steer already filled in; unequal lengths are one line."""
import html

from app.figures.clickable import HEAD
from app.figures.inspect_patch import CELL
from app.ui.inspect_patch import DLA_HEAD, patch_cells, swap_names
from tests.app.helpers import open_tab, plotly_charts, run_page


def _patch(at):
    open_tab(at, "inspect-tabs", "Patch")
    at.text_input(key="inspect-patch-target").set_value("a")
    at.text_input(key="inspect-patch-contrast").set_value("e").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_patch_map_cell_and_links():
    at = _patch(run_page("inspect.py"))
    assert len(plotly_charts(at)) == 1 and any("clean" in c.value and "corrupted" in c.value for c in at.caption)
    at.selectbox(key="inspect-patch-site").set_value("head").run()
    at.session_state[patch_cells("head").key] = CELL.of(1, 2)  # what a click on the map's (layer 1, head 2) stores
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(s.value.startswith("Patched head at L1H2") for s in at.subheader) and len(at.dataframe) == 3
    at.button(key="inspect-patch-ablate").click().run()
    assert not at.exception and at.session_state["inspect-tabs"] == "Ablate"
    assert at.text_input(key="inspect-ablate-heads").value == "1.2"
    assert not at.error, [e.value for e in at.error]
    assert len(at.dataframe) == 2, "top tokens before and after"


def test_swap_and_unequal_lengths_are_one_line():
    at = _patch(run_page("inspect.py"))
    at.text_area(key="inspect-patch-clean").set_value("Then Anna met Beth, and Beth waved at").run()
    at.button(key="inspect-patch-swap").click().run()
    assert at.text_area(key="inspect-patch-corrupted").value == "Then Anna met Beth, and Anna waved at"
    at.text_area(key="inspect-patch-corrupted").set_value("Anna met Bob").run()
    assert len(at.error) == 1 and "the same length" in html.unescape(at.error[0].value)


def test_swap_names():
    assert swap_names("When Mary and John went to the store, John gave a drink to") == \
        "When Mary and John went to the store, Mary gave a drink to"
    assert swap_names("the cat chased the mouse") == "the cat chased the mouse".replace("chased", "#").replace(
        "mouse", "chased").replace("#", "mouse")
    assert swap_names("a b") is None


def test_a_head_opened_on_the_dla_map_is_one_click_from_ablation():
    at = run_page("inspect.py")
    open_tab(at, "inspect-tabs", "Direct logit attribution")
    prompt = at.text_area(key="inspect-prompt").value
    at.session_state[DLA_HEAD.key] = HEAD.of(1, 2, context=prompt)  # what a click on L1H2 stores
    at.run()
    assert not at.exception and any(s.value == "Head L1H2" for s in at.subheader)
    at.button(key="inspect-ablate-link-1-2").click().run()
    assert not at.exception and at.session_state["inspect-tabs"] == "Ablate"
    assert at.text_input(key="inspect-ablate-heads").value == "1.2"
    assert not at.error, [e.value for e in at.error]
