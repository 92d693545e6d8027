"""AppTest: the NAG page ranks the sample pool on first render and shows its figures."""
import html

from tests.app.helpers import open_tab, plotly_charts, run_page


def _chart_titles(at):
    import json

    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in plotly_charts(at)]


def test_nag_page_ranks_the_sample_pool_by_default():
    at = run_page("nag.py")
    assert not at.error, [e.value for e in at.error]
    titles = _chart_titles(at)
    assert any(t.startswith("Distance to the target profile") for t in titles), titles
    assert any(m.label == "Selected documents" for m in at.metric)
    assert len(at.dataframe) >= 1
    assert any("tiny-llama" in html.unescape(c.value) for c in at.caption)
    assert any(t.startswith("Profile of") for t in _chart_titles(open_tab(at, "nag-tab", "Profile")))
    assert any("Neuron-activated graph" in t for t in _chart_titles(open_tab(at, "nag-tab", "Graph")))
    assert not at.error, [e.value for e in at.error]


def test_nag_page_deactivation_and_pasted_targets():
    at = open_tab(run_page("nag.py"), "nag-tab", "Deactivation")
    next(b for b in at.button if b.key == "nag-deact").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(t.startswith("Loss increase after zeroing") for t in _chart_titles(at))
    open_tab(at, "nag-tab", "Ranking").radio(key="nag-target-mode").set_value("Paste").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(t.startswith("Distance to the target profile") for t in _chart_titles(at))


def test_the_corpus_jobs_panel_runs_only_when_opened():
    at = run_page("nag.py")
    assert not any("No corpus job yet" in c.value for c in at.caption)  # closed: its store query did not run
    at.session_state["nag-jobs-panel"] = True  # the user opens it
    at.run()
    assert not at.exception and any("No corpus job yet" in c.value for c in at.caption)


def test_the_graph_opens_small_and_a_slider_shows_more_or_fewer():
    import json

    def nodes(at):
        spec = json.loads(next(c for c in plotly_charts(at) if "Neuron-activated" in c.proto.spec).proto.spec)
        return len(spec["data"][-1]["customdata"])  # the node markers (layer, neuron) come after the edge lines

    at = open_tab(run_page("nag.py"), "nag-tab", "Graph")
    assert at.slider(key="nag-graph-max").value == 60 and 0 < nodes(at) <= 60
    assert any("heaviest neurons" in c.value and "laid out by layer" in c.value for c in at.caption)
    at.slider(key="nag-graph-w").set_value(0.0).run()
    at.slider(key="nag-graph-n").set_value(40).run()
    more = nodes(at)
    at.slider(key="nag-graph-max").set_value(10).run()
    assert not at.exception and not at.error and more > 10 and nodes(at) == 10


def test_the_ranking_table_grows_while_the_pool_is_scored_and_a_stop_keeps_it_marked_partial(monkeypatch):
    from tests.app.helpers import so_far_captions, stop_after_first_partial

    stop_after_first_partial(monkeypatch)
    # a read length no other test uses: the documents' features are extracted here, batch by batch
    at = run_page("nag.py", state={"nag-maxlen": 40})
    assert so_far_captions(at) and " of 250 documents" in so_far_captions(at)[0], [c.value for c in at.caption]
    ranked = next(df.value for df in at.dataframe if "preview" in df.value.columns)
    assert 0 < len(ranked) < 250 and list(ranked["rank"]) == list(range(1, len(ranked) + 1))
    assert not any(m.label == "Selected documents" for m in at.metric), "the finished ranking is not drawn yet"
    at.button(key="stop-Ranking the pool").click().run()
    assert not at.exception
    kept = [w.value for w in at.warning if w.value.startswith("Partial result: ")]
    assert kept and f"{len(ranked)} of 250 documents finished before it was stopped" in kept[0]
    assert "nothing was stored" in kept[0]
    assert any(df.value.equals(ranked) for df in at.dataframe), "the rows seen while it ran stay on screen"
