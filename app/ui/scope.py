"""The run scope of this browser session: a random token kept in the session state and the URL.

The URL keeps it across a reload of the tab (reopening the link shows the same runs); a new tab
without the token starts a new scope. The token groups run-history rows and grants reading them: anyone
given the link can list and reopen the runs. Deleting them needs more than the link (`delete_rights`):
the browser session that made the token (its own server-side session state, which a link does not carry),
or a server started with DASH_ADMIN=1.

Shared server state that changes what everyone computes (the watermark identity registry: every identity is
searched by every detection) is written from a page only by those `registry_rights` allows.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app.ui.guarded import guarded
from backend.config import settings
from backend.store.scope import current_scope, set_client, set_scope

KEY = "run_scope"
MINTED = "run_scope_minted"  # the token this session made itself (never one read from a link)


@dataclass(frozen=True)
class DeleteRights:
    """Whether this session may delete runs, and whose: `session` None = any listed run (an admin)."""

    allowed: bool
    session: str | None
    reason: str


def browser_scope() -> str:
    """This session's scope, made the backend's current one for the rest of the script run."""
    scope = st.session_state.get(KEY) or _from_url()
    if not scope:
        scope = st.session_state[MINTED] = secrets.token_urlsafe(12)
    st.session_state[KEY] = scope
    if st.query_params.get("runs") != scope:
        st.query_params["runs"] = scope
    set_scope(scope)
    set_client(client_id())
    return scope


def client_id() -> str:
    """Who is connected: the connection's remote address when the server knows it (Streamlit gives none for a
    browser on this machine), else this session's id (one websocket), never the URL's token, which a new tab renews."""
    address = guarded(lambda: st.context.ip_address)
    if isinstance(address, str) and address:  # (a test harness without a connection gives a stand-in object)
        return f"address {address}"
    ctx = get_script_run_ctx()
    return f"session {ctx.session_id}" if ctx is not None else ""


def listed_session() -> str | None:
    """Whose runs Home and Runs count and list: this browser session's, or every session's (None) on a server
    started with DASH_SHARED_RUNS=1. One function, so the two pages always count the same runs."""
    return None if guarded(lambda: settings().shared_runs) else current_scope()


def delete_rights() -> DeleteRights:
    """A `?runs=` link grants reading, not deleting: only the session that made the scope deletes its runs
    (and only those, even on a DASH_SHARED_RUNS server), or anyone on a DASH_ADMIN=1 server."""
    if guarded(lambda: settings().admin):
        return DeleteRights(True, listed_session(), "Admin server (DASH_ADMIN=1): any listed run can be deleted.")
    scope = current_scope()
    if scope and st.session_state.get(MINTED) == scope:
        return DeleteRights(True, scope, "This tab's own runs can be deleted.")
    return DeleteRights(False, scope, "This tab was opened from a runs link (or reloaded): it can list and reopen "
                        "these runs but not delete them. Deleting needs the tab that created them, or a server "
                        "started with DASH_ADMIN=1.")


def _from_url() -> str | None:
    token = st.query_params.get("runs")
    # only tokens of the shape this module makes: the URL is user input
    return token if token and len(token) == 16 and token.replace("-", "").replace("_", "").isalnum() else None


LOCAL_ADDRESSES = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class RegistryRights:
    allowed: bool
    reason: str


def registry_rights() -> RegistryRights:
    """Who may add (or bulk-create) watermark identities from a page. The registry is one for the whole server:
    on a server listening on this machine only (the default, 127.0.0.1) its one user may; on a server reachable
    from other machines, where nobody is authenticated, only a server started with DASH_ADMIN=1 lets pages write
    it (the CLI, run by whoever holds the machine, always may)."""
    if guarded(lambda: settings().admin):
        return RegistryRights(True, "Admin server (DASH_ADMIN=1): identities can be added from this page.")
    address = str(st.get_option("server.address") or "")
    if address in LOCAL_ADDRESSES:
        return RegistryRights(True, f"This server listens on {address} only: its user manages the identities.")
    return RegistryRights(False, "This server is reachable from other machines and nobody is authenticated, so "
                        "identities are added by its operator: `python -m backend watermark identity ...` on the "
                        "server, or start it with DASH_ADMIN=1 to allow it from this page.")
