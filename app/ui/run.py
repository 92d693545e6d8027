"""Run a backend computation from a page: progress bar, errors as messages, 'cached / computed in N s'."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from app.ui.guarded import guarded, show_provenance
from backend.progress import Progress
from backend.store import Computed

T = TypeVar("T")


def run_with_progress(label: str, call: Callable[[Progress], Computed[T]]) -> Computed[T] | None:
    """Call `call(progress)` inside a status box with a progress bar; show where the result came from."""
    with st.status(label, expanded=False) as box:
        bar = st.progress(0.0, text=label)

        def progress(fraction: float, message: str) -> None:
            bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

        result = guarded(lambda: call(progress))
        if result is None:
            box.update(label=f"{label}: failed", state="error", expanded=True)
            return None
        box.update(label=f"{label}: {result.provenance}", state="complete")
    show_provenance(result)
    return result
