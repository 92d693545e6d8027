"""One AST parse at a time in this process.

CPython 3.11 keeps the recursion depth of the step that builds Python AST objects in state every thread shares, so
two threads building ASTs at once can fail with SystemError "AST constructor recursion depth mismatch". The app
does that: Streamlit parses each page script it runs, while a background computation derives a verb's code version
(`backend.verbs`) from its parsed source. `serialise_ast_parse` makes `ast.parse`, for every caller in the
process (Streamlit's included), take one lock.
"""
from __future__ import annotations

import ast
import threading

_LOCK = threading.RLock()  # re-entrant: a finalizer run during a parse may parse again in the same thread
_unlocked_parse = ast.parse


def _locked_parse(*args, **kwargs):
    with _LOCK:
        return _unlocked_parse(*args, **kwargs)


def serialise_ast_parse() -> None:
    """Make `ast.parse` take the process's one parse lock (idempotent)."""
    ast.parse = _locked_parse
