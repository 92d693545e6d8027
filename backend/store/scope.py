"""Which browser session a run belongs to, so a shared server does not show one user's runs to another.

The app sets the scope at the start of every script run (`app/main.py`); a ContextVar keeps it to that
run's thread. The CLI, benchmarks and tests run with the empty scope "" (their runs are nobody's session).
Artifacts are never scoped: an identical request from anyone is still served from the store.
"""
from __future__ import annotations

from contextvars import ContextVar

_scope: ContextVar[str] = ContextVar("run_scope", default="")


def set_scope(scope: str) -> None:
    _scope.set(scope)


def current_scope() -> str:
    return _scope.get()
