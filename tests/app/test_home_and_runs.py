import html
from dataclasses import dataclass

from backend.store import ModelRef, cached
from tests.app.helpers import ROOT, error_texts, plotly_charts, run_page


@dataclass(frozen=True)
class Cfg:
    n: int


def test_home_shows_model_store_and_figure():
    at = run_page()
    assert not at.error, [e.value for e in at.error]
    assert any("Model" == s.value for s in at.subheader)
    assert any(m.label == "Artifacts" for m in at.metric)
    assert plotly_charts(at), "the runs-per-feature figure is missing"
    assert at.sidebar.selectbox[0].value == "tiny-llama"
    assert any("ai.google.dev/gemma/terms" in m.value and "Gemma Terms of Use" in m.value for m in at.markdown)


def _run_in_scope(scope: str, n: int) -> str:
    from backend.store.scope import current_scope, set_scope

    before = current_scope()
    set_scope(scope)
    try:
        return cached("apptest", "run", ModelRef("tiny-llama", "abc"), Cfg(n), lambda: {"answer": n}).run_id
    finally:
        set_scope(before)


def _runs_page_for_a_new_session():
    """The Runs page of a new browser session that has itself made one run (and another session one too)."""
    at = run_page()
    mine = _run_in_scope(at.session_state["run_scope"], 1)
    theirs = _run_in_scope("someone-else", 2)
    at.switch_page(str(ROOT / "pages" / "runs.py")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at, mine, theirs


def test_runs_page_lists_and_reopens_this_sessions_runs_only():
    at, mine, theirs = _runs_page_for_a_new_session()
    assert plotly_charts(at), "the runs timeline is missing"
    shown = set(at.dataframe[0].value["run_id"])
    assert mine in shown and theirs not in shown
    assert not at.json, "nothing is reopened before a run is picked"
    at.selectbox(key="runs-reopen").set_value(mine).run()
    assert any(j for j in at.json)


def test_deleting_asks_for_confirmation_and_cannot_touch_other_sessions():
    from backend.store import delete_runs, list_runs

    at, mine, theirs = _runs_page_for_a_new_session()
    at.get("multiselect")[0].set_value([mine]).run()
    delete = next(b for b in at.button if b.label == "Delete selected")
    assert delete.disabled  # not confirmed yet
    at.checkbox(key="runs-confirm").check().run()
    next(b for b in at.button if b.label == "Delete selected").click().run()
    ids = set(list_runs()["run_id"])
    assert mine not in ids and theirs in ids
    assert delete_runs([theirs], session=at.session_state["run_scope"]).runs == ()  # scoped: skips others' runs


def test_deleting_a_run_on_the_page_keeps_the_shipped_set_and_other_sessions_results(fresh_store):
    """The page's confirmation says exactly what goes (the preview), and only that goes."""
    from backend.store import list_runs
    from backend.store.origin import COMPUTED, REFERENCE
    from tests.store.lifecycle import build, counts, keys_by_origin

    at = run_page()  # the app imports the shipped reference set into this fresh store
    scene = build(at.session_state["run_scope"])
    before, keys = counts(), keys_by_origin()
    assert before[REFERENCE] > 200
    at.switch_page(str(ROOT / "pages" / "runs.py")).run()
    at.get("multiselect")[0].set_value([scene.mine]).run()
    assert any(html.unescape(i.value) == "Deletes 1 run(s) and 1 stored result(s) (1 lifecycle)." for i in at.info)
    at.checkbox(key="runs-confirm").check().run()
    next(b for b in at.button if b.label == "Delete selected").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Deleted 1 run(s)" in html.unescape(s.value) for s in at.success)
    after = keys_by_origin()
    assert after[REFERENCE] == keys[REFERENCE] and after[COMPUTED] == keys[COMPUTED] - {scene.mine_key}
    assert counts() == {**before, COMPUTED: before[COMPUTED] - 1}
    assert set(scene.theirs) <= set(list_runs()["run_id"])


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_home_and_runs_count_the_same_runs(fresh_store):
    from tests.store.lifecycle import THEIRS, in_scope, nag_style

    at = run_page()
    in_scope(THEIRS, lambda: [nag_style(20, start=i * 100) for i in range(3)])  # another session's: not counted
    mine = _run_in_scope(at.session_state["run_scope"], 7)
    at.run()
    home = _metric(at, "Runs")
    at.switch_page(str(ROOT / "pages" / "runs.py")).run()
    assert home == _metric(at, "Runs") == "1"
    assert list(at.dataframe[0].value["run_id"]) == [mine]


def test_shared_mode_lists_every_sessions_runs(monkeypatch):
    monkeypatch.setenv("DASH_SHARED_RUNS", "1")
    at, mine, theirs = _runs_page_for_a_new_session()
    assert {mine, theirs} <= set(at.dataframe[0].value["run_id"])


def test_switching_models_keeps_loaded_models_in_memory():
    from backend.models import load, loaded_ids

    at = run_page()
    llama = load("tiny-llama")
    at.sidebar.selectbox[0].set_value("tiny-gpt2").run()
    assert not at.exception and not at.error
    assert any("tiny-gpt2" in html.unescape(m.value) for m in at.markdown)
    assert {"tiny-llama", "tiny-gpt2"} <= set(loaded_ids())
    at.sidebar.selectbox[0].set_value("tiny-llama").run()
    assert load("tiny-llama") is llama  # not reloaded


def test_a_model_outside_the_allowlist_shows_an_error_not_a_traceback():
    from streamlit.testing.v1 import AppTest

    from app.session import CHOSEN_KEY
    from tests.app.helpers import MAIN

    at = AppTest.from_file(MAIN, default_timeout=60)
    at.session_state["model_id"] = "/etc/passwd"
    at.session_state[CHOSEN_KEY] = True  # as if picked in the sidebar (a page's default is always allowlisted)
    at.run()
    assert not at.exception
    assert any("Allowlisted models" in text for text in error_texts(at))


def test_a_session_without_runs_sees_the_same_headings_and_says_there_is_nothing_to_reopen():
    # the README's screenshot outline of Runs must not depend on whether the session computed anything before
    at = run_page()
    theirs = _run_in_scope("someone-else", 3)  # another session's run is not this one's to reopen
    at.switch_page(str(ROOT / "pages" / "runs.py")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [s.value for s in at.subheader] == ["Reopen a run"]
    assert any("Nothing to reopen yet" in c.value for c in at.caption)
    assert theirs not in "".join(c.value for c in at.caption)
