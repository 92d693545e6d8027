"""Drill-downs prepared right after their view (issue 54 §1: a click on a view's object never waits for a model).

Once a view is on screen, `prepare_drilldowns` makes sure the drill-downs of every object it shows are stored:
already stored (the shipped reference set, or an earlier visit) is one store read and nothing else; otherwise they
are computed together, in one pass (e.g. `backend.mt.head_detail.map_head_details`, Inspect's
`backend.internals.store_drilldowns`), in a background thread of this browser session
(`app.ui.run.start_in_background`) with a line saying so and a Stop; the view stays usable meanwhile. A click reads
its object's drill-down from the store; where one object alone costs about what the whole pass does (NAG), a click
that comes while the preparation still runs waits for it (`after_preparation`) instead of repeating its forwards.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.ui.priority import background_priority
from app.ui.run import BackgroundRun, Call, background_run, start_in_background
from backend.progress import Progress, silent
from backend.store import NotStored, stored_only
from backend.store.db import StoreUnavailable

KEPT_ON_STOP = "nothing was stored; a click computes its own drill-down"
WAIT_STEP_S = 0.2  # how often a waiting click reports progress (and so sees its own Stop)


def _all_stored(call: Call) -> bool:
    """Whether `call` is served from the store alone (a store read; an error is the click's to show)."""
    try:
        with stored_only():
            call(silent)
        return True
    except NotStored:
        return False
    except Exception:  # noqa: BLE001 - the click that needs it shows the error as one message
        return True


def prepare_drilldowns(key: str, what: str, call: Call,
                       stored: Callable[[], bool] | None = None) -> BackgroundRun | None:
    """After a view is shown: `call(progress)` stores the drill-downs of its objects (`what`, e.g. "the 72 heads");
    started in the background when the store lacks any, once per session and `key`. `stored()`, when given, says
    whether all are stored by reading their keys only (else `call` is run store-only). The running preparation, or
    None when there was nothing to do (or a store that cannot be read could not keep them)."""
    run = background_run(key)
    if run is None:
        try:
            if stored() if stored is not None else _all_stored(call):
                return None
        except StoreUnavailable:
            return None

        def quietly(progress: Progress):
            with background_priority():  # the session's own clicks and other pages keep the CPU they need
                return call(progress)

        run = start_in_background(key, f"Preparing the drill-downs of {what}", quietly, kept=KEPT_ON_STOP)
    if run.running:
        left, right = st.columns([5, 1])
        left.caption(f"Preparing the drill-downs of {what} in the background ({run.fraction:.0%} when this was "
                     "drawn): a click reads its own as soon as they are stored.")
        right.button("Stop", key=f"{key}-stop", disabled=run.stop.is_set(), on_click=run.stop.set,
                     help=f"Stops the preparation at its next step; {KEPT_ON_STOP}.")
    elif run.stopped or run.error:
        st.caption(run.stopped or f"Preparing the drill-downs failed ({run.error}); a click computes its own.")
    return run


def after_preparation(key: str, call: Call) -> Call:
    """`call`, run once this session's preparation under `key` (if one runs) has ended: the drill-down asked for is
    then a store read. While it waits, the preparation's progress is the click's (its Stop ends the wait)."""
    run = background_run(key)

    def waiting(progress: Progress):
        while run is not None and not run.ended.wait(WAIT_STEP_S):
            progress(run.fraction, f"{run.label}: {run.message}")
        return call(progress)

    return waiting
