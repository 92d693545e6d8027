"""AppTest: the Decoding page runs greedy and ASMC on first render and shows the ESS figure; other tabs, batch."""
import dataclasses
import html
import json

from backend.decoding import FIRST_VIEW
from tests.app.helpers import error_texts, open_tab, plotly_charts, run_page


def test_decoding_page_shows_strategies_side_by_side_and_ess():
    at = run_page("decoding.py")
    assert not at.error, [e.value for e in at.error]
    assert any("tiny-llama" in html.unescape(c.value) or "Tiny" in c.value for c in at.caption)  # model display name
    keys = {chart.key for chart in plotly_charts(at)}
    assert {"dec-side", "dec-ess-fig"} <= keys, "no figure after the default run"
    assert len(at.metric) == 2  # greedy and ASMC columns
    assert any("ESS_min/N" in c.value for c in at.caption), "the ESS caption of the default ASMC run is missing"
    runs = next(df.value for df in at.dataframe if "output" in df.value.columns)
    # a shipped hand-written problem was named by its file line as an upload's ("upload-4")
    assert set(runs["problem"]) == {f"{FIRST_VIEW.problem_set}, 1 step, #{FIRST_VIEW.index}"}
    assert "problem_id" not in runs.columns


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
    import app.model_choice as model_choice
    from backend.models.allowlist import ModelSpec

    original = ModelSpec.is_embedded
    monkeypatch.setattr(ModelSpec, "is_embedded",
                        property(lambda spec: spec.id == "tiny-llama" or original.fget(spec)))
    monkeypatch.setattr(model_choice, "arithmetic_reasoner", lambda: "tiny-qwen2")
    at = run_page("decoding.py")
    assert any("arithmetic reasoning model" in i.value for i in at.info)
    assert any("tiny-qwen2" in html.unescape(c.value) for c in at.caption)


def test_hand_written_problems_and_a_switch_to_the_reasoning_model(monkeypatch):
    import app.model_choice as model_choice
    from backend.tasks.problem_sets import handwritten_problems

    monkeypatch.setattr(model_choice, "arithmetic_reasoner", lambda: "tiny-qwen2")
    at = run_page("decoding.py")
    at.selectbox(key="dec-family").set_value("handwritten").run()
    shown = [p for p in handwritten_problems() if p.difficulty == FIRST_VIEW.steps][FIRST_VIEW.index]
    assert any(html.unescape(shown.question) in html.unescape(m.value) for m in at.markdown)  # the first view's
    assert not any("Chosen for illustration" in i.value for i in at.info)  # not its model: not labelled
    at.button(key="dec-use-reasoner").click().run()
    assert not at.exception
    assert any("tiny-qwen2" in html.unescape(c.value) for c in at.caption)  # now decoding with the reasoner
    assert not [b for b in at.button if b.key == "dec-use-reasoner"]


def test_batch_tab_shows_the_stored_benchmark_of_this_model_only(monkeypatch, tmp_path):
    import json

    import backend.decoding as decoding
    from backend.models import load

    row = {"label": "Greedy", "strategy": "greedy", "budget": 1, "problems": 3, "accuracy": 0.5,
           "mean_latency_s": 1.0, "p95_latency_s": 2.0, "mean_tokens": 40.0}
    path = tmp_path / "decoding_accuracy.json"
    path.write_text(json.dumps({"model": "Tiny", "fingerprint": load("tiny-llama").fingerprint, "sets": {"heldout": 3},
                                "budgets": [2], "max_new_tokens": 8, "summary": [row],
                                "commands": ["bench grid", "bench merge"]}))
    real = decoding.stored_benchmark
    monkeypatch.setattr(decoding, "stored_benchmark", lambda fingerprint: real(fingerprint, path))
    at = run_page("decoding.py")
    open_tab(at, "dec-tab", "Batch & budgets")
    assert "dec-stored-fig" in {chart.key for chart in plotly_charts(at)}
    assert any("Stored benchmark" in m.value and "`bench grid`, then `bench merge`" in m.value for m in at.markdown)
    path.write_text(path.read_text().replace(load("tiny-llama").fingerprint, "another model"))
    at.run()
    assert "dec-stored-fig" not in {chart.key for chart in plotly_charts(at)}
    assert any("No stored benchmark" in i.value for i in at.info)


def test_a_reasoner_that_needs_more_tokens_resets_the_token_field(monkeypatch):
    """A worked-solution reasoner's registry entry asks for more new tokens than the page's default: picking it
    raises the field, so its answers are not cut off before the number; the base model keeps the page's default."""
    import dataclasses

    import app.model_choice as model_choice
    from backend.models import loading

    reasoner = loading.load("tiny-qwen2")
    resident = loading.Residency(lambda handle: handle.model, loading.in_use)  # this test's own, restored after it
    resident.add("tiny-qwen2", dataclasses.replace(reasoner, spec=dataclasses.replace(reasoner.spec, max_new_tokens=96)),
                 reasoner.resident_bytes)
    resident.add("tiny-llama", loading.load("tiny-llama"), 0)
    monkeypatch.setattr(loading, "_resident", resident)
    monkeypatch.setattr(model_choice, "arithmetic_reasoner", lambda: "tiny-qwen2")
    at = run_page("decoding.py")
    assert at.number_input(key="dec-max-new").value == 48
    at.number_input(key="dec-max-new").set_value(20).run()
    at.button(key="dec-use-reasoner").click().run()
    assert not at.exception
    assert at.number_input(key="dec-max-new").value == 96


def test_first_view_is_labelled_as_chosen_for_illustration_beside_the_stored_aggregate(monkeypatch, tmp_path):
    """On the model the first view was chosen for (a tiny model stands in), the page opens on its problem, says it
    was chosen for illustration, and shows the stored benchmark's aggregate with intervals beside it; another
    problem drops the label."""
    import backend.decoding as decoding
    import backend.decoding.first_view as first_view
    from backend.models import load

    rows = [{"label": "Greedy", "strategy": "greedy", "budget": 1, "problems": 160, "accuracy": 0.575,
             "p95_latency_s": 6.07, "mean_tokens": 40.0},
            {"label": "ASMC x4", "strategy": "asmc", "budget": 4, "problems": 160, "accuracy": 0.58125,
             "p95_latency_s": 10.06, "mean_tokens": 160.0}]
    path = tmp_path / "decoding_accuracy.json"
    path.write_text(json.dumps({"model": "Tiny", "fingerprint": load("tiny-llama").fingerprint, "summary": rows}))
    real = first_view.stored_benchmark
    monkeypatch.setattr(first_view, "stored_benchmark", lambda fingerprint: real(fingerprint, path))
    monkeypatch.setattr(decoding, "FIRST_VIEW", dataclasses.replace(FIRST_VIEW, model_id="tiny-llama"))
    at = run_page("decoding.py")
    assert at.selectbox(key="dec-family").value == FIRST_VIEW.problem_set
    assert any("Chosen for illustration" in i.value for i in at.info)
    table = next(df.value for df in at.dataframe if "95% interval" in df.value.columns)
    assert list(table["strategy"]) == ["Greedy", "ASMC x4"]
    assert list(table["95% interval"]) == ["49.8% - 64.9%", "50.4% - 65.5%"]  # Wilson, 92 and 93 of 160
    assert len(at.metric) == 2  # the illustrated runs themselves, below
    at.number_input(key=f"dec-index-{FIRST_VIEW.problem_set}-{FIRST_VIEW.steps}").set_value(0).run()
    assert not any("Chosen for illustration" in i.value for i in at.info)


def test_decoding_page_rc_shows_the_answer_after_each_cycle_and_its_summaries():
    at = run_page("decoding.py")
    at.radio(key="dec-source").set_value("Own prompt").run()
    at.text_area(key="dec-prompt").set_value("2 + 3?")
    at.multiselect(key="dec-strategies").set_value(["rc"]).run()
    at.number_input(key="dec-max-new").set_value(5)
    # the tiny model's 256 byte-token context: a short summary instruction and summaries
    at.text_input(key="dec-x-rc-summary_instruction").set_value('"Sum up."')
    at.text_input(key="dec-x-rc-summary_tokens").set_value("3")
    at.text_input(key="dec-x-rc-cycles").set_value("2")
    at.button(key="dec-run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    open_tab(at, "dec-detail-tab", "RC cycles")
    assert "dec-rc-fig-0" in {chart.key for chart in plotly_charts(at)}
    labels = [e.label for e in at.expander]
    assert {"Cycle 1", "Cycle 2"} <= {label.split(":")[0] for label in labels}


def test_decoding_page_offers_the_long_chains_with_their_step_counts():
    at = run_page("decoding.py")
    at.selectbox(key="dec-family").set_value("long").run()
    assert not at.exception  # (the tiny model's 256 positions may refuse the long question: a message, no traceback)
    assert list(at.selectbox(key="dec-difficulty").options) == ["4", "5", "6", "7", "8"]
    at.selectbox(key="dec-family").set_value("classic").run()
    assert not at.exception and list(at.selectbox(key="dec-difficulty").options) == ["1", "2", "3"]


def test_own_prompt_reads_the_answer_and_judges_it_against_an_expected_one():
    """A typed problem: the answer is read by the problem sets' rule, and an optional expected answer judges it."""
    at = run_page("decoding.py", state={"dec-max-new": 4})
    at.radio(key="dec-source").set_value("Own prompt").run()
    at.text_area(key="dec-prompt").set_value("What is 5 + 7? End with Answer: N.")
    at.multiselect(key="dec-strategies").set_value(["greedy"])
    at.button(key="dec-run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = at.metric[0].value
    assert any("not judged" in c.value for c in at.caption)
    at.number_input(key="dec-expected").set_value(12 if shown != "12" else 13)
    at.button(key="dec-run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(":red[wrong]" in m.value for m in at.markdown), "an expected answer the output misses is judged wrong"
    assert at.metric[0].value == shown, "the answer read from the output does not depend on the expected one"


def test_choosing_a_reduced_precision_copy_says_its_tokens_can_differ():
    at = run_page("decoding.py")
    warned = lambda: [c.value for c in at.caption if "can differ from the model's own" in c.value]  # noqa: E731
    assert not warned()  # the reference weights: no warning
    for precision in ("int8", "bf16"):
        at.selectbox(key="dec-precision").set_value(precision).run()
        assert not at.exception and len(warned()) == 1, precision
    at.selectbox(key="dec-precision").set_value("reference").run()
    assert not warned()
