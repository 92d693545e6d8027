"""A computation's partial results under its status box (app/ui/partials.py through run_verb(partial=)): drawn as
they come, a few times a second at most, kept on screen under a Stop's notice and marked partial, forgotten once a
run finishes."""
from streamlit.testing.v1 import AppTest


def _rows_page():
    import streamlit as st

    from app.ui.run import clicked_for, run_verb
    from backend.progress import Partial, report_partial

    if clicked_for("go", "Start", key="demo-rows"):
        def compute(progress):
            rows = []
            for i in range(3):
                rows.append(i)
                report_partial(progress, Partial(tuple(rows), i + 1, 3, "rows"))
                progress((i + 1) / 3, f"row {i + 1}")
                if st.session_state.get("interrupt", True):
                    st.stop()  # Streamlit ends a running script this way when a Stop click requests a rerun
            return tuple(rows)

        done = run_verb(compute, label="Rows", partial=lambda rows: st.markdown(f"rows so far {rows}"))
        if done is not None:
            st.markdown(f"all rows {done.value}")


def _texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def test_partial_rows_show_while_it_runs_stay_marked_after_a_stop_and_go_once_it_finishes():
    at = AppTest.from_function(_rows_page, default_timeout=60).run()
    at.button(key="demo-rows-run").click().run()
    assert "rows so far (0,)" in _texts(at) and any(c.value.startswith("So far: 1 of 3 rows") for c in at.caption)
    at.button(key="stop-Rows").click().run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("Rows: stopped") for w in warnings)
    assert ("Partial result: 1 of 3 rows finished before it was stopped, shown as it was; nothing was stored as the "
            "result. Run it again for the whole.") in warnings
    assert "rows so far (0,)" in _texts(at), "what was seen stays on screen"
    at.session_state["interrupt"] = False
    at.button(key="demo-rows-run").click().run()
    assert "all rows (0, 1, 2)" in _texts(at) and not [t for t in _texts(at) if t.startswith("rows so far")]
    assert not [w for w in at.warning if w.value.startswith("Partial result")]


def _throttle_page():
    import streamlit as st

    from app.ui.partials import PartialView
    from backend.progress import Partial

    now, drawn = [0.0], []
    view = PartialView("demo", drawn.append, st.empty(), every_s=0.5, clock=lambda: now[0])
    for step in range(6):  # a partial every 0.2 s
        now[0] = step * 0.2
        view.offer(Partial(step, step + 1, 6, "steps"))
    now[0] = 1.5
    view.flush()  # the next progress report draws the one held back
    view.flush()  # nothing new: nothing redrawn
    st.session_state["drawn"] = drawn


def test_partials_are_redrawn_at_most_every_interval_and_the_last_one_held_back_is_drawn_next():
    at = AppTest.from_function(_throttle_page, default_timeout=60).run()
    assert not at.exception and at.session_state["drawn"] == [0, 3, 5]
