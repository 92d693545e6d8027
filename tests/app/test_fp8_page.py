"""AppTest: the FP8 bounds page renders its heatmap by default and runs the transient simulation on demand."""
from tests.app.helpers import plotly_charts, run_page


def test_fp8_page_shows_heatmap_table_and_concentration_by_default():
    at = run_page("fp8_bounds.py")
    assert not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) >= 4, "heatmap, bounds, utilisation and concentration figures expected"
    assert any("tiny-llama" in c.value for c in at.caption), "the model's display name is shown"
    assert len(at.dataframe) >= 1, "the scale factors table is missing"


def test_fp8_page_runs_the_simulation_and_switches_heatmap():
    at = run_page("fp8_bounds.py")
    at.radio(key="fp8-view").set_value("bound").run()
    assert not at.exception and not at.error
    before = len(plotly_charts(at))
    at.number_input(key="fp8-sim-layer").set_value(1)
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == before + 1, "the transient figure is missing"
    assert any(m.label == "Overflows, geometry-aware" and m.value == "0" for m in at.metric)
