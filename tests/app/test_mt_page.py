"""AppTest of the MT-heads page on tiny-llama (built-in data, demonstrations reduced to fit 256 positions)."""
import html

from tests.app.helpers import open_tab, plotly_charts, run_page


def _no_errors(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_mt_page_shows_head_maps_on_first_render():
    at = run_page("mt_heads.py", timeout=300)
    _no_errors(at)
    keys = [chart.proto.id for chart in plotly_charts(at)]
    assert len(keys) == 1 and keys[0].endswith("mt-heat"), keys  # both head maps and the agreement: one figure
    assert any("tiny-llama" in html.unescape(c.value) for c in at.caption)
    assert any("instead of 5" in i.value for i in at.info)  # context-limited k is explained
    assert len(at.dataframe) >= 1


def test_mt_page_switching_head_type_and_running_ablation():
    at = run_page("mt_heads.py", timeout=300)
    at.radio(key="mt-type").set_value("translation").run()
    _no_errors(at)
    open_tab(at, "mt-tab", "Ablation").slider(key="mt-abl-n").set_value(2).run()
    at.slider(key="mt-random").set_value(2).run()
    at.button(key="mt-btn-ablate").click().run()
    _no_errors(at)
    assert len(plotly_charts(at)) == 2  # + the ablation chart
