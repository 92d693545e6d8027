"""Decoding batch, streamed: its accuracy / latency table grows problem by problem while it runs. The rows so far are
kept in the session after each problem, so a Stop keeps them on screen, marked as partial; only a finished batch is
stored (backend.decoding.run_batch)."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.figures import decoding as figs
from app.ui.run import run_verb

PARTIAL = "dec-batch-partial"  # (model id, BatchResult so far, problems in the batch) of a batch that did not finish


def problems_done(partial) -> int:
    return len(partial.rows) // max(1, len(partial.labels))


def streamed_batch(model_id: str, call: Callable) -> object | None:
    """Run `call(progress, on_problem)` (run_batch with its callback) with the table of the rows so far above the
    progress box; the Computed batch, or None (error or Stop)."""
    slot = st.empty()

    def on_problem(partial, total: int) -> None:
        st.session_state[PARTIAL] = (model_id, partial, total)
        with slot.container():
            st.caption(f"So far: {problems_done(partial)} of {total} problems")
            st.dataframe(figs.batch_table(partial), hide_index=True, width="stretch")

    st.session_state.pop(PARTIAL, None)
    done = run_verb(lambda progress: call(progress, on_problem), label="Batch")
    slot.empty()
    if done is not None:
        st.session_state.pop(PARTIAL, None)
    return done


def partial_view(model_id: str) -> bool:
    """The rows of a batch stopped part-way, said to be partial; whether there was one."""
    kept = st.session_state.get(PARTIAL)
    if kept is None or kept[0] != model_id:
        return False
    _, partial, total = kept
    st.warning(f"Partial batch: {problems_done(partial)} of {total} problems finished before it was stopped. Shown "
               "here, not stored: run the batch again for the whole table.", icon=":material/stop_circle:")
    st.dataframe(figs.batch_table(partial), hide_index=True, width="stretch")
    return True
