"""Which browser session a run belongs to, so a shared server does not show one user's runs to another.

The app sets the scope at the start of every script run (`app/main.py`); a ContextVar keeps it to that
run's thread. The CLI, benchmarks and tests run with the empty scope "" (their runs are nobody's session).
Artifacts are never scoped: an identical request from anyone is still served from the store.

The client is who is connected: the remote address of the browser's connection where the server knows it, else its
Streamlit session (one websocket). A scope is only a token in a URL (a new tab gets a new one), so limits on what one
person may ask for (backend.watermark.disclosure's query budget) count per client instead.
"""
from __future__ import annotations

from contextvars import ContextVar

_scope: ContextVar[str] = ContextVar("run_scope", default="")
_client: ContextVar[str] = ContextVar("client", default="")


def set_scope(scope: str) -> None:
    _scope.set(scope)


def current_scope() -> str:
    return _scope.get()


def set_client(client: str) -> None:
    _client.set(client)


def current_client() -> str:
    """"address 203.0.113.9", "session <id>", or "" outside the app (the CLI, benchmarks, tests)."""
    return _client.get()
