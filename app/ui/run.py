"""The one way a page runs a backend computation: `run_verb(verb, subject, config)`.

It draws a status box with the progress bar, the time left and Stop, shows an error as one message, and says under
the result where it came from ('cached' / 'computed in N s'). `when=` says whether to compute now (`NOW`), to serve a
stored result first and ask before long work (`ASK`, the page's automatic computations; `STORED_FIRST`), to show a
stored result only (`STORED_ONLY`), or to wait for a compute button on a miss (`AfterClick`). A Stop ends the work
at its next progress step, stores nothing partial and ends with one notice (`stopped_message`), also for work in a
background thread (`start_in_background`, corpus jobs), whose state is kept per browser session. `partial=render`:
the partial results the computation reports (backend.progress.report_partial) are drawn with `render` under the
status box while it runs, and kept on screen under a Stop's notice, marked partial (app/ui/partials.py).
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from app.ui.guarded import failure_message, guarded, show_provenance
from app.ui.partials import PartialView, Render, Watching, show_kept
from app.ui.priority import BACKGROUND_NICE_STEP, background_priority
from app.ui.text import literal
from backend.estimates import Estimate, estimate, from_history
from backend.estimates.load import thread_nice
from backend.progress import Partial, Progress, Stopped, silent
from backend.store import Computed, NotStored, stored_only, while_waiting
from backend.verbs import Verb, settle_code_versions

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


def stated_estimate(verb: Verb, subject: Any, config: Any = None, calibrate: bool = True) -> Estimate | None:
    """How long `verb(subject, config)` would take if it were computed now, in this page's status box (at the
    background priority `_run` computes at): this machine's measured rate for the verb and model, the request's
    size and the current load (`backend.estimates`). None when nothing can be said (no store; with calibrate=False,
    a verb never measured on a model never probed here)."""
    return estimate(verb, subject, config, nice=run_nice(), calibrate=calibrate)


def run_nice() -> int:
    """The nice value a computation started from this thread runs at (`_run` lowers its priority)."""
    return min(19, thread_nice() + BACKGROUND_NICE_STEP)


def expected_time(verb: Verb, subject: Any, config: Any = None) -> None:
    """Under a button that starts heavy work: how long it will take on this machine now."""
    _expected(stated_estimate(verb, subject, config))


def expected_time_from_runs(feature: str, action: str, fingerprint: str) -> None:
    """The same for work whose size the page does not know before it starts: how long its earlier runs on this
    model took here, at the current load (nothing when it never ran here)."""
    _expected(from_history(feature, action, fingerprint, nice=run_nice()))


def _expected(stated: Estimate | None) -> None:
    if stated is not None and stated.seconds >= 1:
        st.caption(f"On this machine this takes {duration(stated.seconds)} at the current load ({stated.basis}; "
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
    show_kept(label)


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


@dataclass(frozen=True)
class Now:
    """Compute in the status box (a stored result comes back through it, 'cached')."""


@dataclass(frozen=True)
class Ask:
    """A page's automatic computation: a stored result is shown at once; a miss that took `over_s` or more on this
    model before waits for a "Compute (about N s)" button; anything else computes in the status box.
    `over_s=None`: the page default `ASK_OVER_S`, read when the page runs (tests set it)."""

    over_s: float | None = None


@dataclass(frozen=True)
class StoredOnly:
    """Only a stored result, drawn as nothing: None on a miss, nothing computed (a probe or an optional extra)."""


@dataclass(frozen=True)
class AfterClick:
    """A stored result at once; on a miss, `note` (if any), how long it took here before, and the compute prompt:
    the button `button`, which stays clicked while the settings are still `settings` (`clicked_for`, under `key`)
    and computes in the status box."""

    button: str
    key: str
    settings: object
    note: str = ""
    disabled: bool = False


When = Now | Ask | StoredOnly | AfterClick
NOW, ASK, STORED_FIRST, STORED_ONLY = Now(), Ask(), Ask(NEVER_ASK), StoredOnly()

Call = Callable[[Progress], Any]


def run_verb(verb: Verb | Call, subject: Any = None, config: Any = None, *, label: str | None = None,
             when: When = NOW, partial: Render | None = None) -> Computed | None:
    """The one way a page computes: `verb(subject, config, progress)` — or, for a computation not declared as a
    `Verb` yet, `verb(progress)` — in a status box with its progress bar, time left and Stop, an error shown as one
    message, and 'cached' / 'computed in N s' under the result. None when there is nothing to show (an error, a
    Stop, or a miss that waits for its button).

    label: the status box's title and the key of its Stop (default: the verb's help). `when`: see `Now`, `Ask`,
    `StoredOnly`, `AfterClick`. A call returning a plain value (not `Computed`) gets one, timed here. `partial`:
    draws the computation's partial value (what `render` of its finished value would take) while it runs."""
    call, label = _as_call(verb, subject, config, label)
    if isinstance(when, StoredOnly):  # computes nothing, so nothing for a Stop to end
        found = _stored(call)
        return None if isinstance(found, NotStored) else found
    if isinstance(when, AfterClick):
        return _after_click(label, call, when, verb, subject, config, partial)
    if _stopped_here(label):
        return None
    button_key = f"compute-now-{label}"
    if isinstance(when, Now) or (isinstance(when, Ask) and st.session_state.get(button_key)):
        return _run(label, call, _lazy_estimate(verb, subject, config), partial)
    found = _stored(call)
    if not isinstance(found, NotStored):
        if found is not None:
            show_provenance(found)
        return found
    over_s = ASK_OVER_S if when.over_s is None else when.over_s
    # work that never asks (a click's drill-down, STORED_FIRST) does not probe the model for its status box's
    # estimate: the probe is two forwards at background priority, paid by a fresh store's first such click (7 s
    # at load 5-12 before a 0.1 s Decoding particle); its estimate comes from earlier runs here, if any
    stated = _estimate_of_miss(found, verb, subject, config, calibrate=math.isfinite(over_s))
    # only a time measured here asks first: a first view never waits for a button on a calibration alone
    if stated is not None and stated.runs and stated.seconds >= over_s:
        st.info(f"{label}: not computed yet for these settings. On this machine it takes "
                f"{duration(stated.seconds)} at the current load ({stated.basis}); "
                "the result is stored, so it is instant next time.")
        st.button(f"Compute ({duration(stated.seconds)})", key=button_key, type="primary")
        return None
    return _run(label, call, lambda: stated, partial)


def _estimate_of_miss(miss: NotStored, verb: Verb | Call, subject: Any, config: Any,
                      calibrate: bool = True) -> Estimate | None:
    """The stated time of a request found missing: a verb's calibrated estimate (calibrate=False: from what the
    store has only), or for a plain call the earlier runs of the verb it missed (its size unknown)."""
    if isinstance(verb, Verb):
        return stated_estimate(verb, subject, config, calibrate)
    return from_history(miss.feature, miss.action, miss.fingerprint, nice=run_nice())


def _lazy_estimate(verb: Verb | Call, subject: Any, config: Any) -> Callable[[], Estimate | None]:
    """The estimate for the time left of a run started without a look-up: asked at its first progress report,
    from what the store has (the model is busy computing then: it is not probed)."""
    if not isinstance(verb, Verb):
        return lambda: None
    return lambda: estimate(verb, subject, config, nice=run_nice(), calibrate=False)


def _after_click(label: str, call: Call, when: AfterClick, verb: Verb | Call, subject: Any,
                 config: Any, partial: Render | None) -> Computed | None:
    found = _stored(call)
    if not isinstance(found, NotStored):
        if found is not None:
            show_provenance(found)
        return found
    if when.note:
        st.caption(when.note)
    stated = _estimate_of_miss(found, verb, subject, config)
    _expected(stated)
    # after a Stop the button is disarmed and says so under it (clicked_for) until it is clicked again
    if not clicked_for(when.settings, when.button, when.key, disabled=when.disabled) or _stopped_here(label):
        return None
    return _run(label, call, lambda: stated, partial)


def _stopped_here(label: str) -> bool:
    """In the rerun a Stop click started: its notice, in place of the work. Otherwise the stop is forgotten, so the
    next interaction computes again (a disarmed run button waits for its click)."""
    stopped = st.session_state.setdefault(_STOPPED, {})
    # Only the rerun the Stop click itself started shows the notice: the Stop button's value is true in that rerun
    # alone. (A "notice shown yet" flag swallowed the next Generate when the Stop's rerun never reached this call,
    # as a form's button is false on that rerun.)
    if (label in stopped and st.session_state.get(f"stop-{label}")
            and not st.session_state.get(f"compute-now-{label}")):
        _stopped_notice(label)
        return True
    stopped.pop(label, None)
    return False


def _as_call(verb: Verb | Call, subject: Any, config: Any, label: str | None) -> tuple[Call, str]:
    if isinstance(verb, Verb):
        return (lambda progress: verb(subject, config, progress)), label or verb.help[:1].upper() + verb.help[1:]
    if label is None:
        raise TypeError("run_verb: a plain callable needs its label")
    return verb, label


def _computed(call: Call, progress: Progress) -> Computed:
    """`call(progress)` as a `Computed` (a call that is not a cached verb is timed here)."""
    start = time.perf_counter()
    value = call(progress)
    if isinstance(value, Computed):
        return value
    return Computed(value=value, cached=False, seconds=time.perf_counter() - start, key="", run_id="")


def _stored(call: Call) -> Computed | NotStored | None:
    """The stored result of `call`, computing nothing: the miss when it is not stored; None after an error shown."""
    try:
        with stored_only():
            return guarded(lambda: _computed(call, silent))
    except NotStored as miss:
        return miss

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


PACE_TRUSTED_FROM = 0.10  # the share done from which the observed pace alone says the time left


def time_left(fraction: float, elapsed_s: float, estimate_s: float | None = None) -> float | None:
    """Seconds left of a run `fraction` done after `elapsed_s`: the rest of the work at the estimated rate
    (`estimate_s`, the stated total) while little is done, blended into the observed pace as the share done
    grows (its weight (fraction / PACE_TRUSTED_FROM)^2, whole from PACE_TRUSTED_FROM on). None when there is
    nothing to go on: no estimate and too little done to extrapolate."""
    if fraction >= 1.0:
        return None
    paced = elapsed_s * (1.0 - fraction) / fraction if fraction >= 0.02 and elapsed_s >= 2 else None
    if estimate_s is None:
        return paced
    by_rate = estimate_s * (1.0 - max(fraction, 0.0))
    if paced is None:
        return by_rate
    weight = min(1.0, fraction / PACE_TRUSTED_FROM) ** 2
    return weight * paced + (1.0 - weight) * by_rate


def with_time_left(message: str, fraction: float, elapsed_s: float, estimate_s: float | None = None) -> str:
    """The progress text with the time left (`time_left`): a long run says how long it will still take without
    anyone opening anything."""
    left = time_left(fraction, elapsed_s, estimate_s)
    return f"{message} · {duration(left)} left" if left is not None and left >= 1 else message


def _run(label: str, call: Call, stated: Callable[[], Estimate | None] = lambda: None,
         partial: Render | None = None) -> Computed | None:
    """`call` in the status box; `stated()`: its estimate, asked at the first progress report; its partial results
    drawn with `partial` under the box."""
    # Open while it runs: the progress bar, the time left and Stop are seen without a click; closed when done.
    box = st.status(label, expanded=True)
    so_far = None if partial is None else PartialView(label, partial, st.empty())
    with box:
        bar = st.progress(0.0, text=label)
        stop_slot = st.empty()  # a Stop button for as long as the work runs
        stop_slot.button("Stop", key=f"stop-{label}", on_click=_stop, args=(label,),
                         help="Stops at the next progress step: nothing partial is stored, the model stays usable.")
        started = time.monotonic()
        st.session_state.setdefault(_STARTED, {})[label] = started
        estimated: list[float | None] = []  # the estimate's seconds, once asked

        def draw(fraction: float, message: str) -> None:
            if not estimated:
                found = stated()
                estimated.append(None if found is None else found.seconds)
            bar.progress(min(max(float(fraction), 0.0), 1.0),
                         text=with_time_left(message, fraction, time.monotonic() - started, estimated[0]))

        progress = throttled(draw) if so_far is None else Watching(throttled(draw), so_far)

        def waiting() -> None:  # drawn at once: it says why nothing moves
            bar.progress(0.0, text="Waiting: the same computation is running for another session; its result is shown "
                               "here when it is stored")

        with while_waiting(waiting), background_priority():  # other sessions' pages keep the CPU they need
            result = guarded(lambda: _computed(call, progress))
        stop_slot.empty()
        st.session_state.get(_STARTED, {}).pop(label, None)
        if so_far is not None:
            so_far.finished()
        if result is None:
            box.update(label=f"{label}: failed", state="error", expanded=True)
            return None
        box.update(label=f"{label}: {result.provenance}", state="complete", expanded=False)
    show_provenance(result)
    return result


# ---------------------------------------------------------------- work in a background thread (corpus jobs)
# A corpus job outlives the script run that starts it, so it runs in a thread of its own and the page watches it.
# Its state lives in the browser session's own state (one slot per session and job key): two sessions never share
# a job's progress or its Stop, and no registry outlives the sessions. Stop is the same button and the same notice
# as a page computation's; the thread sees it at its next progress step (it cannot be ended by a rerun).
_BACKGROUND = "background-runs"  # session state: job key -> BackgroundRun


@dataclass
class BackgroundRun:
    """One background computation of this session: its progress, then its result, error or Stop notice."""

    label: str
    kept: str  # what a Stop keeps, for its notice
    started: float = field(default_factory=time.monotonic)
    fraction: float = 0.0
    message: str = "starting"
    result: Any = None
    error: str = ""  # ready for st.error (failure_message)
    stopped: str = ""  # the Stop notice
    so_far: Partial | None = None  # the latest partial result the work reported (the page draws it)
    stop: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)
    watches_partials = True  # it is the work's progress (`__call__`), and keeps its partials

    @property
    def running(self) -> bool:
        return not self.ended.is_set()

    def __call__(self, fraction: float, message: str) -> None:
        if self.stop.is_set():  # the Stop button: end at this progress step
            raise Stopped
        self.fraction, self.message = min(max(float(fraction), 0.0), 1.0), message

    def partial(self, partial: Partial) -> None:
        self.so_far = partial

    def work(self, call: Call) -> None:
        try:
            self.result = call(self)
        except Stopped:
            self.stopped = stopped_message(self.label, time.monotonic() - self.started, self.kept)
        except Exception as err:  # noqa: BLE001 - shown as a failure; a bug's details go to the server log
            self.error = failure_message(err)
        finally:
            self.ended.set()


def background_run(key: str) -> BackgroundRun | None:
    """This session's background run under `key` (running or ended), if it started one."""
    return st.session_state.get(_BACKGROUND, {}).get(key)


def start_in_background(key: str, label: str, call: Call, *, kept: str) -> BackgroundRun:
    """Start `call(progress)` in a thread of this server, watched by this session under `key`; `kept`: what a Stop
    keeps (e.g. the shards already finished)."""
    run = BackgroundRun(label, kept)
    st.session_state.setdefault(_BACKGROUND, {})[key] = run
    settle_code_versions()  # derived here, so the thread finds its verbs' code versions ready
    threading.Thread(target=run.work, args=(call,), name=f"background-{label}", daemon=True).start()
    return run


def background_progress(key: str) -> BackgroundRun | None:
    """The run's progress bar and Stop while it runs, its error or Stop notice once ended; returns the run (its
    result is the caller's to show)."""
    run = background_run(key)
    if run is None:
        return None
    if run.error:
        st.error(run.error)
    elif run.stopped:
        st.warning(run.stopped, icon=":material/stop_circle:")
    elif run.running:
        st.progress(run.fraction, text=literal(with_time_left(run.message, run.fraction,
                                                                time.monotonic() - run.started)))
        st.button("Stop", key=f"{key}-stop", disabled=run.stop.is_set(), on_click=run.stop.set,
                  help=f"Stops at the next step; {run.kept}.")
    return run
