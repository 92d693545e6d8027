"""A running computation's partial results (backend.progress.Partial), drawn under its status box with the page's
own `render(value)` as they come: the table or curve grows while the work runs. Redrawn a few times a second at
most; the latest one is kept in the session, so a Stop keeps it on screen, marked partial (the store never holds
it: only a finished computation is stored)."""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from backend.progress import Partial, Progress

Render = Callable[[Any], None]  # draws a partial value the way the page draws the finished one
# A partial redraw is a table or a figure sent to the browser: at most this often (a fast loop of small problems
# would otherwise redraw many times a second); a skipped one is drawn at the next progress report after it.
PARTIAL_REDRAW_S = 0.5
_KEPT = "runs-partial-kept"  # session state: label -> (Partial, Render) of the latest partial of that computation


def stopped_line(partial: Partial) -> str:
    return (f"Partial result: {partial.line()} finished before it was stopped, shown as it was; nothing was "
            "stored as the result. Run it again for the whole.")


class PartialView:
    """The placeholder `slot` under a status box, redrawn with `render` at most every `every_s` seconds."""

    def __init__(self, label: str, render: Render, slot, every_s: float = PARTIAL_REDRAW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.render, self.slot, self.every_s, self.clock = label, render, slot, every_s, clock
        self.drawn_at = -math.inf
        self.pending: Partial | None = None
        forget(label)  # a new run: what an earlier Stop kept is replaced

    def offer(self, partial: Partial) -> None:
        """The newest partial: kept at once (before drawing: a Stop interrupts at the next drawing), drawn when
        the last drawing is old enough."""
        st.session_state.setdefault(_KEPT, {})[self.label] = (partial, self.render)
        self.pending = partial
        self.flush()

    def flush(self) -> None:
        now = self.clock()
        if self.pending is None or now - self.drawn_at < self.every_s:
            return
        partial, self.pending, self.drawn_at = self.pending, None, now
        with self.slot.container():
            st.caption(f"So far: {partial.line()} (partial; updated as the work runs)")
            self.render(partial.value)

    def finished(self) -> None:
        """The work ended (a result or an error): the page draws the result; nothing partial is kept."""
        self.slot.empty()
        forget(self.label)


class Watching:
    """The progress a page computation reports to: `progress` for the bar, partials to `view`."""

    watches_partials = True

    def __init__(self, progress: Progress, view: PartialView) -> None:
        self.progress, self.view = progress, view

    def __call__(self, fraction: float, message: str) -> None:
        self.progress(fraction, message)
        self.view.flush()

    def partial(self, partial: Partial) -> None:
        self.view.offer(partial)


def forget(label: str) -> None:
    st.session_state.get(_KEPT, {}).pop(label, None)


def show_kept(label: str) -> None:
    """Under a Stop's notice: the partial result the stopped work had shown, marked partial."""
    kept = st.session_state.get(_KEPT, {}).get(label)
    if kept is None:
        return
    partial, render = kept
    st.warning(stopped_line(partial), icon=":material/stop_circle:")
    render(partial.value)
