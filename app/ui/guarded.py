"""A user's mistake shows as a message, never as a traceback: the error rule of every page call.

`app.ui.run.run_verb` applies it to every computation (with progress and Stop); `guarded` itself is for the quick
calls that run no model: parsing an input, reading the store, checking a setting."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from app.ui.text import literal
from backend.errors import UserError
from backend.progress import Stopped
from backend.store import NotStored

T = TypeVar("T")
log = logging.getLogger("dashboard")


def failure_message(err: Exception) -> str:
    """What a page shows for a failed call (ready for st.error), from inside its `except`: a UserError's own words,
    shown literally (they quote file names, lines and user text), or for a bug its type only — the exception text
    can name internal paths, so it goes to the server log."""
    if isinstance(err, UserError):
        return literal(str(err))
    log.exception("unexpected error")
    return f"Something went wrong ({type(err).__name__}). The details are in the server log."


def guarded(call: Callable[[], T]) -> T | None:
    try:
        return call()
    except NotStored:  # not an error: run_verb asks before computing
        raise
    except Stopped:  # the user stopped it: the store kept nothing partial and listed the run as stopped
        st.info("Stopped: nothing was stored.")
    except Exception as err:
        st.error(failure_message(err))
    return None


def show_provenance(computed) -> None:
    """'cached' or 'computed in N s' under a result."""
    st.caption(f"{computed.provenance} · run {computed.run_id}" if computed.run_id else computed.provenance)
