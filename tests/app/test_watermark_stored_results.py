"""AppTest: the Watermark page's Evaluate tab shows the stored benchmark figures (data/results/, published by
bench/watermark.py and bench/watermark_length.py) before anything is run."""
from tests.app.helpers import open_tab, plotly_charts, run_page


def test_evaluate_tab_shows_the_stored_length_and_latency_figures():
    at = open_tab(run_page("watermark.py"), "wm-tab", "Evaluate")
    keys = {c.key for c in plotly_charts(at)}
    assert {"wm-length", "wm-latency"} <= keys, keys
