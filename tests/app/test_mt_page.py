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


def test_an_experiment_table_grows_while_it_runs_and_a_stop_keeps_it_marked_partial(monkeypatch):
    from tests.app.helpers import so_far_captions, stop_after_first_partial

    at = run_page("mt_heads.py", timeout=300)
    open_tab(at, "mt-tab", "Ablation").slider(key="mt-abl-n").set_value(2).run()
    at.slider(key="mt-random").set_value(1).run()  # four conditions: a setting no other test runs
    stop_after_first_partial(monkeypatch)
    at.button(key="mt-btn-ablate").click().run()
    assert so_far_captions(at) and " of 4 conditions" in so_far_captions(at)[0], [c.value for c in at.caption]
    table = next(df.value for df in at.dataframe if "chrF++" in df.value.columns)
    assert 1 <= len(table) < 4 and list(table["condition"])[0] == "instruction-free"
    assert len(plotly_charts(at)) == 1, "the ablation chart waits for the whole experiment"
    at.button(key="stop-Ablation").click().run()
    _no_errors(at)
    kept = [w.value for w in at.warning if w.value.startswith("Partial result: ")]
    assert kept and "of 4 conditions finished before it was stopped" in kept[0] and "nothing was stored" in kept[0]
    assert any(df.value.equals(table) for df in at.dataframe), "the lines seen while it ran stay on screen"
