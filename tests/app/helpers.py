"""Running the real app entry point under Streamlit's AppTest, on a given page."""
from __future__ import annotations

import html
import threading
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
MAIN = str(ROOT / "app" / "main.py")


def run_page(script: str | None = None, timeout: float = 120, state: dict | None = None) -> AppTest:
    """Run app/main.py, switching to pages/<script> when given; fails on any exception element.

    state: widget values set before the page's first run (e.g. fewer new tokens, so a default prompt fits the
    tiny models' 256-position context, which the one context rule would otherwise refuse)."""
    at = AppTest.from_file(MAIN, default_timeout=timeout)
    at.run()
    for key, value in (state or {}).items():
        at.session_state[key] = value
    if script is not None:
        at.switch_page(str(ROOT / "pages" / script))
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def private_identities(tmp_path, monkeypatch):
    """A watermark secret and a store of the test's own, on a server that grants no admin rights (no DASH_ADMIN):
    the identity registry as a fresh install has it, empty. Returns backend.watermark.identities."""
    monkeypatch.setenv("DASH_WATERMARK_SECRET_FILE", str(tmp_path / "secret.key"))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    monkeypatch.delenv("DASH_ADMIN", raising=False)
    from backend.watermark import identities

    return identities


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    """Click the tab `label` of the tabs `key` (app/ui/tabs.py: only the open tab's body runs)."""
    at.session_state[key] = label
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plotly_charts(at: AppTest) -> list:
    return at.get("plotly_chart")


def error_texts(at: AppTest) -> list[str]:
    """The error boxes' text as the user reads it (the app encodes punctuation so nothing renders as markup)."""
    return [html.unescape(e.value) for e in at.error]


def _background_runs() -> list:
    """The BackgroundRuns (app/ui/run.py) whose threads still work in this process."""
    from app.ui.run import BackgroundRun

    owners = (getattr(getattr(t, "_target", None), "__self__", None) for t in threading.enumerate())
    return [run for run in owners if isinstance(run, BackgroundRun)]


def stop_background_runs(timeout_s: float = 120) -> None:
    """Stop every background run of this process (as its session's end would) and wait until each has ended."""
    for run in _background_runs():
        run.stop.set()
    for run in _background_runs():
        run.ended.wait(timeout_s)


def stop_after_first_partial(monkeypatch) -> None:
    """End a page's computation right after its first partial result is drawn, the way Streamlit ends it for the
    rerun a Stop click requests: what the page shows then is what a user saw while the work ran."""
    import streamlit as st

    from app.ui import partials

    draw = partials.PartialView.flush

    def flush_then_stop(view) -> None:
        before = view.drawn_at
        draw(view)
        if view.drawn_at != before:
            st.stop()

    monkeypatch.setattr(partials.PartialView, "flush", flush_then_stop)


def so_far_captions(at: AppTest) -> list[str]:
    """The "So far: N of M ..." lines drawn above a running computation's partial result."""
    return [c.value for c in at.caption if c.value.startswith("So far: ")]
