"""Which drill-down a page shows: the latest new selection among its charts, kept in session state.

A chart's selection survives reruns, so only a selection that changed since the last run chooses; the choice is
kept under `key` (tests set it directly, as AppTest cannot fire a Plotly selection).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from app.ui.drilldown_select import selected_points
from app.ui.selection import remember_click


def remember_pick(key: str, events: Mapping[str, Any], pick: Callable[[Any], Any]) -> Any:
    """Update `st.session_state[key]` from the charts' events (name -> event) whose selection is new; return it."""
    for name, event in events.items():
        signature = repr([dict(p) for p in selected_points(event)])
        seen = f"{key}-seen-{name}"
        if st.session_state.get(seen) == signature:
            continue
        st.session_state[seen] = signature
        chosen = pick(event)
        if chosen is not None:
            st.session_state[key] = chosen
    return st.session_state.get(key)


def clicked_or_hint(key: str, event: Any, bounds: tuple[int, ...], hint: str) -> tuple[int, ...] | None:
    """The chart cell chosen by the last click (`remember_click` under `key`), or None after a caption `hint`
    saying what to click."""
    chosen = remember_click(st.session_state, key, event, bounds)
    if chosen is None:
        st.caption(hint)
    return chosen
