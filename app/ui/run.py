"""Run a backend computation from a page: progress bar, errors as messages, 'cached / computed in N s'.

A page's automatic computations (the ones that run on opening it or on changing a setting) pass `ask_over_s`:
a stored result is shown at once, and a computation that took that long or more on this model before waits for
a click on a button that says how long it will take. Work never measured here runs with its progress bar.
`ask_over_s=NEVER_ASK`: a stored result is shown at once (no progress box to draw), anything else computes.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from app.ui.guarded import guarded, show_provenance
from app.ui.priority import background_priority
from backend.progress import Progress, silent
from backend.store import Computed, NotStored, stored_only, while_waiting
from backend.store.artifacts import typical_seconds
from backend.store.db import StoreUnavailable

T = TypeVar("T")

ASK_OVER_S = 10.0  # a page's first view should be on screen within this: longer work is asked for
NEVER_ASK = math.inf
# A computation reports progress per token or per item (tens a second on a small model); each report redrawn is a
# message to the browser and a re-render there. A few a second read the same to a person and cost both ends far
# less (a Decoding tab re-rendering every token took a fifth of a core in Chromium). A Stop is seen at the next
# redrawn report, so it still takes effect within this interval.
PROGRESS_REDRAW_S = 0.25


def duration(seconds: float) -> str:
    return f"about {seconds:.0f} s" if seconds < 90 else f"about {seconds / 60:.0f} min"


# A running status box (progress, time left, Stop) is pinned to the top right of the window: drawn in the page's
# flow it sat below the fold after a click low on a page (Stop at y = 1123 in a 1400 x 1000 window). Only while it
# runs (its spinner icon): a finished box stays where the page put it.
PINNED_STATUS_CSS = """<style>
[data-testid="stExpander"]:has([data-testid="stExpanderIconSpinner"]) {
  position: fixed; top: 4rem; right: 1.5rem; z-index: 999990; width: min(34rem, calc(100vw - 3rem));
  max-height: calc(100vh - 5rem); overflow: auto; border-radius: 0.5rem;
  background: var(--st-background-color, #ffffff); box-shadow: 0 4px 18px rgba(0, 0, 0, 0.22);
}
</style>"""


def pin_running_status() -> None:
    """Once per script run (app/main.py): the rule that pins a running status box in view."""
    st.html(PINNED_STATUS_CSS)


def expected_time(feature: str, action: str, fingerprint: str) -> None:
    """Under a button that starts heavy work: how long it took here before, when it ran on this model."""
    try:
        seconds = typical_seconds(feature, action, fingerprint)
    except StoreUnavailable:
        return
    if seconds is not None and seconds >= 1:
        st.caption(f"On this machine this took {duration(seconds)} on this model before (median of earlier runs; "
                   "a stored result for the same settings is shown at once).")


_ARMED = "run-buttons-armed"  # the session-state keys of clicked_for buttons: a Stop disarms them all
_STOPPED = "runs-stopped"  # label of a computation stopped in this session -> the run buttons it disarmed
_NOTED = "runs-stopped-noted"  # labels whose notice this script run has shown (cleared at the end of each run)
_STARTED = "runs-started-at"  # label of a running computation -> its start (time.monotonic), for the notice
_STOPPED_AFTER = "runs-stopped-after"  # label of a stopped computation -> seconds it had run


def stopped_message(label: str, seconds: float | None,
                    kept: str = "nothing was stored; the run is listed as stopped on the Runs page") -> str:
    """The one notice every Stop ends with (page computations, batches, corpus jobs)."""
    after = "" if seconds is None else f" after {seconds:.0f} s"
    return f"{label}: stopped{after}, {kept}. Start it again when you are ready."


def _stopped_notice(label: str) -> None:
    st.session_state.setdefault(_NOTED, set()).add(label)
    seconds = st.session_state.get(_STOPPED_AFTER, {}).get(label)
    st.warning(stopped_message(label, seconds), icon=":material/stop_circle:")


def unclaimed_stop_notices() -> None:
    """At the end of every script run (app/main.py): the notice of a Stop whose rerun did not reach its computation
    (a batch started by a plain button), drawn where the caller reserved room (the top of the page), so no Stop
    ends silently. Only in the Stop's own rerun, like the notice in place."""
    noted = st.session_state.pop(_NOTED, set())
    for label in st.session_state.get(_STOPPED, {}):
        if label not in noted and st.session_state.get(f"stop-{label}"):
            _stopped_notice(label)
    st.session_state.pop(_NOTED, None)


def clicked_for(config: object, label: str, key: str, *, disabled: bool = False) -> bool:
    """A button that starts work on these settings: true from its click on, for as long as the settings are still
    `config` (kept in session state under `key`; the button's key is `key` + "-run"), so a rerun keeps the result.
    After a Stop it stays off, with a note under it, until it is clicked again."""
    stopped = st.session_state.setdefault(_STOPPED, {})
    if st.button(label, key=f"{key}-run", disabled=disabled):
        st.session_state[key] = config
        st.session_state.setdefault(_ARMED, set()).add(key)
        for work in [w for w, keys in stopped.items() if key in keys]:
            del stopped[work]
    else:
        for work in [w for w, keys in stopped.items() if key in keys]:
            _stopped_notice(work)
    return st.session_state.get(key) == config


def _stop(label: str) -> None:
    """The Stop button's callback, run before the rerun it triggers. That rerun request ends the running script at
    its next progress update (Streamlit raises its rerun exception inside the computation), so the store records
    the run as stopped and keeps nothing partial; disarming the run buttons keeps the rerun from starting it again."""
    disarmed = tuple(st.session_state.pop(_ARMED, set()))
    for key in disarmed:
        st.session_state.pop(key, None)
    st.session_state.setdefault(_STOPPED, {})[label] = disarmed
    started = st.session_state.get(_STARTED, {}).pop(label, None)
    st.session_state.setdefault(_STOPPED_AFTER, {})[label] = None if started is None else time.monotonic() - started


def run_with_progress(label: str, call: Callable[[Progress], Computed[T]], *,
                      ask_over_s: float | None = None) -> Computed[T] | None:
    """Call `call(progress)` inside a status box with a progress bar; show where the result came from.
    With `ask_over_s`: serve a stored result, or ask first when the work is known to take that long."""
    button_key = f"compute-now-{label}"
    stopped = st.session_state.setdefault(_STOPPED, {})
    # Only the rerun the Stop click itself started shows the notice in place of the work: the Stop button's value
    # is true in that rerun alone. (A "notice shown yet" flag swallowed the next Generate when the Stop's rerun
    # never reached this call, as a form's button is false on that rerun.)
    if label in stopped and st.session_state.get(f"stop-{label}") and not st.session_state.get(button_key):
        _stopped_notice(label)
        return None
    stopped.pop(label, None)  # the next interaction computes again (a disarmed run button waits for its click)
    if ask_over_s is not None and not st.session_state.get(button_key):
        try:
            with stored_only():
                found = guarded(lambda: call(silent))
            if found is not None:
                show_provenance(found)
            return found
        except NotStored as miss:
            if miss.estimate_seconds is not None and miss.estimate_seconds >= ask_over_s:
                st.info(f"{label}: not computed yet for these settings. On this machine it takes "
                        f"{duration(miss.estimate_seconds)} (the median of its earlier runs on this model); "
                        "the result is stored, so it is instant next time.")
                st.button(f"Compute ({duration(miss.estimate_seconds)})", key=button_key, type="primary")
                return None
    return _run(label, call)


def throttled(draw: Progress, every_s: float = PROGRESS_REDRAW_S,
              clock: Callable[[], float] = time.monotonic) -> Progress:
    """`draw` at most once per `every_s`; the last report (fraction 1) always."""
    drawn = -math.inf  # when `draw` last ran

    def progress(fraction: float, message: str) -> None:
        nonlocal drawn
        now = clock()
        if fraction < 1.0 and now - drawn < every_s:
            return
        drawn = now
        draw(fraction, message)

    return progress


def with_time_left(message: str, fraction: float, elapsed_s: float) -> str:
    """The progress text with the time left, extrapolated from the share done so far (once there is a share to
    extrapolate from): a long run says how long it will still take without anyone opening anything."""
    if not 0.02 <= fraction < 1.0 or elapsed_s < 2:
        return message
    left = elapsed_s * (1.0 - fraction) / fraction
    return f"{message} · {duration(left)} left" if left >= 1 else message


def _run(label: str, call: Callable[[Progress], Computed[T]]) -> Computed[T] | None:
    # Open while it runs: the progress bar, the time left and Stop are seen without a click; closed when done.
    with st.status(label, expanded=True) as box:
        bar = st.progress(0.0, text=label)
        stop_slot = st.empty()  # a Stop button for as long as the work runs
        stop_slot.button("Stop", key=f"stop-{label}", on_click=_stop, args=(label,),
                         help="Stops at the next progress step: nothing partial is stored, the model stays usable.")
        started = time.monotonic()
        st.session_state.setdefault(_STARTED, {})[label] = started
        progress = throttled(lambda fraction, message: bar.progress(
            min(max(float(fraction), 0.0), 1.0), text=with_time_left(message, fraction, time.monotonic() - started)))

        def waiting() -> None:  # drawn at once: it says why nothing moves
            bar.progress(0.0, text="Waiting: the same computation is running for another session; its result is shown "
                               "here when it is stored")

        with while_waiting(waiting), background_priority():  # other sessions' pages keep the CPU they need
            result = guarded(lambda: call(progress))
        stop_slot.empty()
        st.session_state.get(_STARTED, {}).pop(label, None)
        if result is None:
            box.update(label=f"{label}: failed", state="error", expanded=True)
            return None
        box.update(label=f"{label}: {result.provenance}", state="complete", expanded=False)
    show_provenance(result)
    return result


def stored_result(call: Callable[[Progress], Computed[T]]) -> Computed[T] | None:
    """The stored result of `call`, computing nothing: None when these settings were never computed (a view whose
    work takes minutes shows it at once and otherwise waits for its button)."""
    try:
        with stored_only():
            return guarded(lambda: call(silent))
    except NotStored:
        return None
