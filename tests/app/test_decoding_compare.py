"""Decoding side by side: greedy runs first, and a comparison stopped part-way is shown with what finished, marked
as partial (tests/e2e/test_decoding_streams.py watches the columns arrive in a real browser)."""
from app.ui.decoding_compare import STATE, Comparison, run_order
from tests.app.helpers import plotly_charts, run_page


def test_greedy_runs_first_and_the_others_keep_their_order():
    assert run_order(["asmc", "mh", "greedy", "best_of_n"]) == ("greedy", "asmc", "mh", "best_of_n")


def test_a_stopped_comparison_shows_what_finished_marked_as_partial():
    at = run_page("decoding.py")
    full = at.session_state[STATE]
    assert full.complete and full.strategies == ("greedy", "asmc") and len(at.metric) == 2
    assert not any("Partial comparison" in w.value for w in at.warning)
    at.session_state[STATE] = Comparison(full.model_id, full.strategies, full.results[:1])  # as a Stop leaves it
    at.run()
    assert not at.exception
    assert any(w.value.startswith("Partial comparison: 1 of 2 strategies finished") and "not run: ASMC" in w.value
               for w in at.warning), [w.value for w in at.warning]
    assert len(at.metric) == 1 and any(m.value.startswith("**Greedy**") for m in at.markdown)
    runs = next(df.value for df in at.dataframe if "output" in df.value.columns)
    assert list(runs["strategy"]) == ["Greedy"] and "dec-side" in {c.key for c in plotly_charts(at)}


def test_a_stopped_batch_keeps_its_rows_so_far_marked_as_partial():
    from app.ui.decoding_batch import PARTIAL
    from backend.decoding import DecodeConfig, run_batch, settings_for
    from backend.models import load
    from backend.tasks import problem_set
    from tests.app.helpers import open_tab

    at = open_tab(run_page("decoding.py"), "dec-tab", "Batch & budgets")
    settings = settings_for([DecodeConfig(strategy="greedy", max_new_tokens=4)])
    kept = []
    run_batch(load("tiny-llama"), problem_set("classic", 2, 1), settings,
              on_problem=lambda partial, total: kept.append((partial, total)))
    partial, total = kept[0]
    at.session_state[PARTIAL] = ("tiny-llama", partial, 5)  # as a Stop after the first of 5 problems leaves it
    at.run()
    assert not at.exception
    assert any(w.value.startswith("Partial batch: 1 of 5 problems finished") for w in at.warning)
    from app.figures.decoding import batch_table

    assert any(df.value.equals(batch_table(partial)) for df in at.dataframe), "the rows so far"
    at.button(key="dec-batch-run").click().run()  # a whole batch replaces it
    assert not at.exception and PARTIAL not in at.session_state
    assert not any(w.value.startswith("Partial batch") for w in at.warning)
