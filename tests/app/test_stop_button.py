"""AppTest: a long computation has a Stop button. Stopping ends the work at its next progress step (here the script
is ended the way Streamlit ends it for the rerun a Stop click requests), stores nothing, lists the run as stopped,
and the run button stays off with a note until it is clicked again."""
import duckdb
from streamlit.testing.v1 import AppTest

from backend.store.db import release


def _page():
    import streamlit as st

    from app.ui.run import clicked_for, run_verb
    from backend.store import ModelRef, cached

    if clicked_for("go", "Start the long work", key="demo-long"):
        def compute(progress):
            progress(0.5, "halfway")
            if st.session_state.get("interrupt", True):
                st.stop()  # Streamlit ends a running script this way when a click requests a rerun
            return 42

        done = run_verb(lambda progress: cached("demo", "long", ModelRef("tiny", "f00d"), {"n": 1},
                                                lambda: compute(progress)), label="Long work")
        if done is not None:
            st.write(f"result {done.value}")


def _rows(store):
    release()  # this process's open connection: the file is read as another process would
    with duckdb.connect(str(store), read_only=True) as con:
        return (con.execute("SELECT status FROM runs ORDER BY created").fetchall(),
                con.execute("SELECT count(*) FROM artifacts WHERE feature = 'demo'").fetchone()[0])


def test_stop_ends_the_work_stores_nothing_and_keeps_it_stopped(fresh_store):
    at = AppTest.from_function(_page, default_timeout=60).run()
    at.button(key="demo-long-run").click().run()
    stop = at.button(key="stop-Long work")
    assert stop.label == "Stop", "a Stop button while the work runs"
    running = at.get("status")[0]
    assert running.proto.expanded, "progress and Stop are in view while the work runs, without a click"
    assert _rows(fresh_store) == ([("stopped",)], 0)
    stop.click().run()
    assert not at.exception
    assert any("Long work: stopped after " in w.value and "nothing was stored" in w.value for w in at.warning)
    assert not [m for m in at.markdown if "result" in m.value]
    at.run()  # another interaction: the stopped work does not start again by itself
    assert _rows(fresh_store) == ([("stopped",)], 0) and any("stopped" in w.value for w in at.warning)
    at.session_state["interrupt"] = False
    at.button(key="demo-long-run").click().run()  # clicked again: it runs to the end and is stored
    assert any("result 42" in m.value for m in at.markdown)
    assert _rows(fresh_store) == ([("stopped",), ("done",)], 1)
    assert not [b for b in at.button if b.key == "stop-Long work"], "no Stop button once the work is done"


def test_progress_is_redrawn_a_few_times_a_second_and_always_at_the_end():
    from app.ui.run import throttled

    now, drawn = [0.0], []
    progress = throttled(lambda f, m: drawn.append((f, m)), every_s=0.25, clock=lambda: now[0])
    for step in range(10):  # a report every 0.1 s
        now[0] = step * 0.1
        progress(step / 10, f"step {step}")
    now[0] = 0.95
    progress(1.0, "done")  # the end is drawn even right after a redraw
    assert [m for _, m in drawn] == ["step 0", "step 3", "step 6", "step 9", "done"]


def _page_with_a_plain_button():
    import streamlit as st

    from app.ui.run import run_verb, unclaimed_stop_notices
    from backend.store import ModelRef, cached

    top = st.container()
    if st.button("Run batch", key="plain-run"):  # a plain button: the Stop's rerun does not reach the computation
        def compute(progress):
            progress(0.5, "halfway")
            st.stop()
            return 1

        run_verb(lambda progress: cached("demo", "batch", ModelRef("tiny", "f00d"), {"n": 2},
                                         lambda: compute(progress)), label="Batch")
    with top:
        unclaimed_stop_notices()


def test_a_stop_whose_rerun_does_not_reach_the_computation_still_says_so(fresh_store):
    """Decoding's batch starts on a plain button: the rerun after Stop never calls the computation again, so the
    notice comes from the page frame (app/main.py), at the top, once."""
    at = AppTest.from_function(_page_with_a_plain_button, default_timeout=60).run()
    at.button(key="plain-run").click().run()
    assert at.button(key="stop-Batch").label == "Stop"
    at.button(key="stop-Batch").click().run()
    notices = [w.value for w in at.warning if "Batch: stopped" in w.value]
    assert len(notices) == 1 and "nothing was stored" in notices[0]
    at.run()
    assert not [w for w in at.warning if "Batch: stopped" in w.value], "said once"


def _form_page():
    """The Generate tab's shape: a form's submit button (false on every rerun but its own) starts the work."""
    import streamlit as st

    from app.ui.run import run_verb
    from backend.store import ModelRef, cached

    with st.form("gen"):
        prompt = st.text_input("Prompt", "first", key="prompt")
        go = st.form_submit_button("Generate")
    if go:
        def compute(progress):
            progress(0.5, "halfway")
            if st.session_state.get("interrupt", True):
                st.stop()
            return prompt.upper()

        done = run_verb(lambda progress: cached("demo", "gen", ModelRef("tiny", "f00d"), {"p": prompt},
                                                lambda: compute(progress)), label="Generating")
        if done is not None:
            st.write(f"result {done.value}")


def test_generate_right_after_stop_starts_the_new_run(fresh_store):
    """Issue 46 §5 #9: Stop, then Generate: the new run starts (it was swallowed by a "stopped" notice)."""
    at = AppTest.from_function(_form_page, default_timeout=60).run()
    at.button[0].click().run()
    at.button(key="stop-Generating").click().run()  # the Stop's rerun: the form's button is false, no work runs
    assert not at.exception
    at.session_state["interrupt"] = False
    at.text_input(key="prompt").set_value("second")
    at.button[0].click().run()
    assert any("result SECOND" in m.value for m in at.markdown), [w.value for w in at.warning]
    assert _rows(fresh_store) == ([("stopped",), ("done",)], 1)
