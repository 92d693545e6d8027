"""Corpus jobs run in a background thread (app.ui.run.start_in_background): Stop ends one at its next progress
step with the one Stop notice, a failure is one message, and each browser session has its own jobs' progress and
Stop (two sessions launching under the panel's same key do not share a slot)."""
import html
import threading

from streamlit.testing.v1 import AppTest

from app.ui.corpus_jobs import KEPT_ON_STOP
from app.ui.run import BackgroundRun
from backend.errors import UserError


def _run_in_thread(call) -> BackgroundRun:
    run = BackgroundRun("Corpus job", KEPT_ON_STOP)
    threading.Thread(target=run.work, args=(call,), daemon=True).start()
    return run


def test_stop_ends_a_running_job_at_its_next_step_and_says_what_it_kept():
    from tests.app.demo_work import waiting_job

    started, go_on = threading.Event(), threading.Event()
    run = _run_in_thread(lambda progress: waiting_job("corpus", progress, started, go_on))
    assert started.wait(30) and run.running and run.message == "shard 1 of 2 of corpus"
    run.stop.set()  # what the Stop button does
    go_on.set()
    assert run.ended.wait(30)
    assert run.stopped.startswith("Corpus job: stopped after ") and not run.error and run.result is None
    assert "the shards finished before it are stored" in run.stopped
    assert run.message == "shard 1 of 2 of corpus", "the step after the Stop never ran"


def test_a_failed_job_is_one_message():
    def mistaken(progress):
        raise UserError("No shard matches `data/*.jsonl`")

    def broken(progress):
        raise KeyError("/internal/path")

    run = _run_in_thread(mistaken)
    assert run.ended.wait(30) and html.unescape(run.error) == "No shard matches `data/*.jsonl`"
    run = _run_in_thread(broken)
    assert run.ended.wait(30)
    assert run.error == "Something went wrong (KeyError). The details are in the server log."


def _jobs_page():
    """The panel's launch and progress view under the Watermark page's key."""
    import streamlit as st

    from app.ui.corpus_jobs import _launch, _progress_view
    from tests.app.demo_work import waiting_job

    started, go_on = st.session_state["started"], st.session_state["go-on"]
    if st.button("Run local job", key="wm-jobs-run"):
        _launch("wm-jobs", "corpus", lambda corpus, progress: waiting_job(corpus, progress, started, go_on))
    _progress_view("wm-jobs")


def _session() -> tuple[AppTest, threading.Event, threading.Event]:
    at = AppTest.from_function(_jobs_page, default_timeout=60)
    started, go_on = threading.Event(), threading.Event()
    at.session_state["started"], at.session_state["go-on"] = started, go_on
    return at.run(), started, go_on


def _job_of(at: AppTest) -> BackgroundRun:
    return at.session_state["background-runs"]["wm-jobs"]


def _stop_buttons(at: AppTest) -> list:
    return [b for b in at.button if b.key == "wm-jobs-stop"]


def test_two_sessions_corpus_jobs_do_not_share_a_slot():
    first, first_started, first_go_on = _session()
    second, second_started, second_go_on = _session()
    first.button(key="wm-jobs-run").click().run()
    assert first_started.wait(30)
    first.run()
    second.run()
    assert len(_stop_buttons(first)) == 1 and first.get("progress"), "the session that launched it watches it"
    assert not _stop_buttons(second) and not second.get("progress"), "another session has no slot of that job"
    assert "background-runs" not in second.session_state
    second.button(key="wm-jobs-run").click().run()  # the same key in the other session: its own job
    assert second_started.wait(30) and _job_of(second) is not _job_of(first)
    _stop_buttons(first)[0].click().run()  # the first session's Stop stops its own job only
    first_go_on.set()
    second_go_on.set()
    assert _job_of(first).ended.wait(30) and _job_of(second).ended.wait(30)
    first.run()
    second.run()
    assert [w.value for w in first.warning if "Corpus job: stopped after" in w.value] and not first.success
    assert [s.value for s in second.success] == ["Job job-1: 10 rows, 2 shard(s) run, 0 already done, 0 failed."]
    assert not second.warning


def _counting_page():
    """The panel's launch and progress view, with a real job that waits before it ends."""
    import streamlit as st

    from app.ui.corpus_jobs import _launch, _progress_view
    from tests.app.demo_work import job_then_wait

    started, go_on, task = st.session_state["started"], st.session_state["go-on"], st.session_state["task"]
    if st.button("Run local job", key="count-jobs-run"):
        _launch("count-jobs", st.session_state["corpus"],
                lambda corpus, progress: job_then_wait(corpus, progress, task, started, go_on))
    _progress_view("count-jobs")


def test_the_rows_of_a_running_jobs_finished_shards_are_shown(tmp_path, fresh_store):
    from tests.corpus.support import CountTask, write_corpus

    at = AppTest.from_function(_counting_page, default_timeout=60)
    started, go_on = threading.Event(), threading.Event()
    at.session_state["started"], at.session_state["go-on"] = started, go_on
    at.session_state["task"], at.session_state["corpus"] = CountTask(tmp_path), str(write_corpus(tmp_path / "c", 60, 3))
    at.run()
    at.button(key="count-jobs-run").click().run()
    assert started.wait(30)
    at.run()
    assert at.session_state["background-runs"]["count-jobs"].running
    assert any(c.value.startswith("So far: 3 of 3 shards finished; the first 60 rows") for c in at.caption), [
        c.value for c in at.caption]
    assert len(at.dataframe[0].value) == 60 and "s0-d0" in set(at.dataframe[0].value["id"])
    go_on.set()
    assert at.session_state["background-runs"]["count-jobs"].ended.wait(30)
