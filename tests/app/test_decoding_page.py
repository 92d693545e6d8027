"""AppTest: the Decoding page runs greedy and ASMC on first render and shows the ESS figure; other tabs, batch."""
import html

from tests.app.helpers import error_texts, open_tab, plotly_charts, run_page


def test_decoding_page_shows_strategies_side_by_side_and_ess():
    at = run_page("decoding.py")
    assert not at.error, [e.value for e in at.error]
    assert any("tiny-llama" in c.value or "Tiny" in c.value for c in at.caption)  # model display name
    keys = {chart.key for chart in plotly_charts(at)}
    assert {"dec-side", "dec-ess-fig"} <= keys, "no figure after the default run"
    assert len(at.metric) == 2  # greedy and ASMC columns
    assert any("ESS_min/N" in c.value for c in at.caption), "the ESS caption of the default ASMC run is missing"


def test_decoding_page_mh_and_batch():
    at = run_page("decoding.py")
    at.multiselect(key="dec-strategies").set_value(["best_of_n", "mh", "asmc"])
    at.number_input(key="dec-max-new").set_value(6)
    at.button(key="dec-run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(at.metric) == 3
    open_tab(at, "dec-detail-tab", "Genealogy")
    keys = {chart.key for chart in plotly_charts(at)}
    assert "dec-genealogy" in keys and "dec-ess-fig" not in keys  # a hidden tab's chart is not sent
    open_tab(at, "dec-detail-tab", "MH acceptance")
    assert "dec-mh-fig" in {chart.key for chart in plotly_charts(at)}
    assert any("Acceptance rate" in c.value for c in at.caption)
    open_tab(at, "dec-detail-tab", "Candidates")
    assert len(at.dataframe) >= 2  # the runs table and the candidates of best-of-n and ASMC
    open_tab(at, "dec-tab", "Batch & budgets")
    at.number_input(key="dec-batch-n").set_value(2)
    at.button(key="dec-batch-run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    keys = {chart.key for chart in plotly_charts(at)}
    assert {"dec-batch-fig", "dec-collapse", "dec-budget-fig"} <= keys
    assert any("Best-of-n x4" in str(df.value) for df in at.dataframe)


def test_decoding_page_bad_parameters_show_an_error_not_a_traceback():
    at = run_page("decoding.py")
    at.multiselect(key="dec-strategies").set_value(["mh"])
    at.number_input(key="dec-max-new").set_value(1000)
    at.number_input(key="dec-block").set_value(1)
    at.number_input(key="dec-mh-steps").set_value(100)  # about 5 million proposal tokens
    at.button(key="dec-run").click().run()
    assert not at.exception
    assert any("per-run budget" in text for text in error_texts(at))


def test_first_visit_opens_on_the_arithmetic_reasoner_and_says_so(monkeypatch):
    """As on a fresh install (the configured default is an embedded model): the first visit of Decoding switches
    to the reasoning model and says why; here a tiny model stands in for the reasoner."""
    from backend.disagreement import pair
    from backend.models.registry import ModelSpec

    original = ModelSpec.is_embedded
    monkeypatch.setattr(ModelSpec, "is_embedded",
                        property(lambda spec: spec.id == "tiny-llama" or original.fget(spec)))
    monkeypatch.setattr(pair, "arithmetic_reasoner", lambda: "tiny-qwen2")
    at = run_page("decoding.py")
    assert any("arithmetic reasoning model" in i.value for i in at.info)
    assert any("tiny-qwen2" in html.unescape(c.value) for c in at.caption)
