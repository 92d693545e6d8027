"""Tabs that run only the open tab's body.

Plain st.tabs runs every tab's body, and the browser draws every hidden chart: the pages with charts in several
tabs spent most of their reopen time drawing Plotly charts nobody was looking at. These tabs rerun the page when
another tab is clicked, and only the open tab's body runs.

A widget in a tab body is not rendered while its tab is hidden, and Streamlit forgets the value of a widget that is
not rendered: give such widgets `persist_state="session"` (and a key) so a value survives a look at another tab.
Under AppTest, open a tab with `at.session_state[key] = label`.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st


def lazy_tabs(bodies: dict[str, Callable[[], None]], *, key: str) -> None:
    """One tab per label; the first is open when the page opens, and only the open one's body is called."""
    for tab, body in zip(st.tabs(list(bodies), key=key, on_change="rerun"), bodies.values()):
        if tab.open:
            with tab:
                body()
