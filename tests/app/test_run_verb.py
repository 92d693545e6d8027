"""AppTest: `run_verb`, the one page call: a verb runs in a status box with its progress and Stop and says where its
result came from; a user's mistake is one message; `when=` serves stored results, asks before long work or waits
for its compute button."""
import html

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from backend.store.db import release


def _page():
    import streamlit as st

    from app.ui.run import ASK, NOW, STORED_ONLY, AfterClick, run_verb
    from tests.app.demo_work import DOUBLE, DoubleConfig

    state = st.session_state
    config = DoubleConfig(n=state.get("n", 1), fail=state.get("fail", False), interrupt=state.get("interrupt", False))
    when = {"now": NOW, "ask": ASK, "stored only": STORED_ONLY,
            "after click": AfterClick("Compute the double", "demo-double", config)}[state.get("when", "now")]
    done = run_verb(DOUBLE, None, config, when=when)
    st.write("nothing shown" if done is None else f"result {done.value}")


def _app(**state) -> AppTest:
    at = AppTest.from_function(_page, default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _store(store):
    """(statuses of the recorded runs, stored demo artifacts), read as another process would."""
    release()
    with duckdb.connect(str(store), read_only=True) as con:
        return (con.execute("SELECT status FROM runs ORDER BY created").fetchall(),
                con.execute("SELECT count(*) FROM artifacts WHERE feature = 'demo'").fetchone()[0])


def _said(at) -> list[str]:
    return [m.value for m in at.markdown]


def test_a_verb_shows_its_progress_and_where_its_result_came_from(fresh_store):
    at = _app()
    assert not at.exception
    box = at.get("status")[0]
    assert box.proto.label.startswith("Double a number: computed in"), "the label defaults to the verb's help"
    bar = at.get("progress")[0]
    assert (bar.proto.value, bar.proto.text) == (50, "halfway"), "the verb's progress report is drawn"
    assert "result 2" in _said(at) and at.caption[0].value.startswith("computed in")
    at.run()
    assert at.get("status")[0].proto.label == "Double a number: cached"
    assert at.caption[0].value.startswith("cached · run ")
    assert _store(fresh_store) == ([("done",), ("done",)], 1)


def test_a_user_error_is_one_message_shown_as_typed(fresh_store):
    from tests.app.demo_work import BAD_TOKEN

    at = _app(fail=True)
    assert not at.exception
    assert [html.unescape(e.value) for e in at.error] == [BAD_TOKEN]
    assert at.get("status")[0].proto.label == "Double a number: failed"
    assert "nothing shown" in _said(at)


def test_stored_only_draws_and_computes_nothing_on_a_miss(fresh_store):
    at = _app(when="stored only")
    assert "nothing shown" in _said(at)
    assert not at.get("status") and not at.button and not at.caption
    assert _store(fresh_store) == ([], 0)
    at.session_state["when"] = "now"
    at.run()
    at.session_state["when"] = "stored only"
    at.run()
    assert "result 2" in _said(at) and not at.get("status"), "a stored result is served without a box"


def test_a_miss_waits_for_its_compute_button_and_a_stored_result_does_not(fresh_store):
    at = _app(when="after click")
    assert "nothing shown" in _said(at) and [b.label for b in at.button] == ["Compute the double"]
    assert _store(fresh_store) == ([], 0)
    at.button(key="demo-double-run").click().run()
    assert "result 2" in _said(at) and _store(fresh_store)[1] == 1
    at.session_state["n"] = 2  # other settings: the button again
    at.run()
    assert "nothing shown" in _said(at) and [b.label for b in at.button] == ["Compute the double"]
    at.session_state["n"] = 1  # stored: shown at once, no button
    at.run()
    assert "result 2" in _said(at) and not at.button and at.caption[0].value.startswith("cached")


def test_stop_keeps_nothing_and_the_compute_button_stays_off_until_clicked(fresh_store):
    at = _app(when="after click", interrupt=True)
    at.button(key="demo-double-run").click().run()
    stop = at.button(key="stop-Double a number")
    assert stop.label == "Stop" and at.get("status")[0].proto.expanded
    assert _store(fresh_store) == ([("stopped",)], 0), "the run is listed as stopped; nothing partial is stored"
    stop.click().run()
    assert not at.exception
    notices = [w.value for w in at.warning if "Double a number: stopped" in w.value]
    assert len(notices) == 1 and "nothing was stored" in notices[0]
    at.run()  # another interaction: the stopped work does not start again, and says why under its button
    assert "nothing shown" in _said(at) and any("stopped" in w.value for w in at.warning)
    assert _store(fresh_store) == ([("stopped",)], 0)
    at.session_state["interrupt"] = False
    at.button(key="demo-double-run").click().run()  # clicked again: it runs to the end and is stored
    assert "result 2" in _said(at) and not [w for w in at.warning if "stopped" in w.value]
    assert _store(fresh_store) == ([("stopped",), ("done",)], 1)


@pytest.mark.asks_before_computing  # the product's threshold (tests/app/conftest.py)
def test_work_known_to_take_long_asks_first_and_says_how_long(fresh_store, monkeypatch):
    from backend.estimates import expected
    from backend.estimates.load import CpuLoad
    from backend.store.timings import Timing, record_timing

    monkeypatch.setattr(expected, "current_load", lambda nice=None: CpuLoad(1.0, 1, 2, 0))  # an idle machine
    # an earlier run with other settings took two minutes here
    record_timing(Timing("demo", "double", "f00d", 1.0, 120.0, 1.0, 1, 2, 0))
    at = _app(when="ask")
    assert "nothing shown" in _said(at) and any("about 2 min" in i.value for i in at.info)
    next(b for b in at.button if b.label == "Compute (about 2 min)").click().run()
    assert "result 2" in _said(at)


def test_a_plain_call_gets_a_label_and_a_timed_result(fresh_store):
    def page():
        import streamlit as st

        from app.ui.run import run_verb

        done = run_verb(lambda progress: (progress(1.0, "done"), {"answer": 42})[1], label="Plain work")
        st.write(f"result {done.value['answer']} {done.cached}")

    at = AppTest.from_function(page, default_timeout=60).run()
    assert "result 42 False" in _said(at) and at.get("status")[0].proto.label.startswith("Plain work: computed in")


def test_a_plain_call_without_a_label_is_refused():
    from app.ui.run import run_verb

    with pytest.raises(TypeError, match="label"):
        run_verb(lambda progress: 1)
