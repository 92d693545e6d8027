"""AppTest: the FP8 bounds page renders its heatmap by default; concentration and the transient simulation are
in tabs that run when opened."""
import html

from tests.app.helpers import open_tab, plotly_charts, run_page

CONCENTRATION = "Rank-aware vs rank-agnostic concentration"
TRANSIENT = "Training transient: delayed vs geometry-aware scaling"


def test_fp8_page_shows_bounds_and_scales_first_and_concentration_in_its_tab():
    at = run_page("fp8_bounds.py")
    assert not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 2, "the heatmap and the per-layer figure (bounds over utilisation) expected"
    assert any("tiny-llama" in html.unescape(c.value) for c in at.caption), "the model's display name is shown"
    assert len(at.dataframe) == 1, "the scale factors table (the open tab) is missing"
    open_tab(at, "fp8-more", CONCENTRATION)
    assert len(plotly_charts(at)) == 3 and not at.dataframe, "the concentration figure replaces the table"


def test_fp8_page_runs_the_simulation_in_its_tab_and_switches_heatmap():
    at = run_page("fp8_bounds.py")
    at.radio(key="fp8-view").set_value("bound").run()
    assert not at.exception and not at.error
    open_tab(at, "fp8-more", TRANSIENT)
    before = len(plotly_charts(at))
    at.number_input(key="fp8-sim-layer").set_value(1)
    # by its key: the drill-down preparation's Stop may be the page's first button while it runs
    at.button(key="FormSubmitter:fp8-sim-Run simulation").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == before + 1, "the transient figure is missing"
    assert any(m.label == "Overflows, geometry-aware" and m.value == "0" for m in at.metric)
