"""The run scope of this browser session: a random token kept in the session state and the URL.

The URL keeps it across a reload of the tab (reopening the link shows the same runs); a new tab
without the token starts a new scope. The token only groups run-history rows: it grants nothing.
"""
from __future__ import annotations

import secrets

import streamlit as st

from app.ui.guarded import guarded
from backend.config import settings
from backend.store.scope import current_scope, set_scope

KEY = "run_scope"


def browser_scope() -> str:
    """This session's scope, made the backend's current one for the rest of the script run."""
    scope = st.session_state.get(KEY) or _from_url() or secrets.token_urlsafe(12)
    st.session_state[KEY] = scope
    if st.query_params.get("runs") != scope:
        st.query_params["runs"] = scope
    set_scope(scope)
    return scope


def listed_session() -> str | None:
    """Whose runs Home and Runs count and list: this browser session's, or every session's (None) on a server
    started with DASH_SHARED_RUNS=1. One function, so the two pages always count the same runs."""
    return None if guarded(lambda: settings().shared_runs) else current_scope()


def _from_url() -> str | None:
    token = st.query_params.get("runs")
    # only tokens of the shape this module makes: the URL is user input
    return token if token and len(token) == 16 and token.replace("-", "").replace("_", "").isalnum() else None
