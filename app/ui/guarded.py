"""Run a backend call so that a user's mistake shows as a message, never as a traceback."""
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


def guarded(call: Callable[[], T]) -> T | None:
    try:
        return call()
    except NotStored:  # not an error: run_with_progress asks before computing
        raise
    except Stopped:  # the user stopped it: the store kept nothing partial and listed the run as stopped
        st.info("Stopped: nothing was stored.")
    except UserError as err:  # messages quote file names, lines and user text: shown literally, never rendered
        st.error(literal(str(err)))
    except Exception as err:  # a bug: say so plainly, keep the details in the server log
        log.exception("unexpected error")
        # the exception text can name internal paths: it goes to the server log only
        st.error(f"Something went wrong ({type(err).__name__}). The details are in the server log.")
    return None


def show_provenance(computed) -> None:
    """'cached' or 'computed in N s' under a result."""
    st.caption(f"{computed.provenance} · run {computed.run_id}" if computed.run_id else computed.provenance)
