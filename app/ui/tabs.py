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


def lazy_tabs(bodies: dict[str, Callable[[], None]], *, key: str, shared: bool = False) -> None:
    """One tab per label; the first is open when the page opens, and only the open one's body is called.

    shared: the open tab is in the URL's query string (`?<key>=<label>`: a reload or a shared link opens it) and is
    kept for the session, so a visit to another page comes back to it (Streamlit drops the state of a widget that
    is not drawn, and a page switch clears the query string)."""
    kept = f"{key}-kept"
    if shared and key not in st.session_state and st.session_state.get(kept) in bodies:
        st.session_state[key] = st.session_state[kept]
    tabs = st.tabs(list(bodies), key=key, on_change="rerun", bind="query-params" if shared else None)
    if shared:
        st.session_state[kept] = st.session_state.get(key)
    for tab, body in zip(tabs, bodies.values()):
        if tab.open:
            with tab:
                body()
