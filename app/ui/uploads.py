"""An uploaded file checked against its caps once, before a page parses it."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.ui.guarded import guarded

_PASSED = "uploads-within-caps"  # file ids already checked in this session: a rerun does not rescan 50 MB


def within_caps(upload, check: Callable[[bytes, str], None]) -> bool:
    """Whether `check(data, name)` accepts the upload; a refusal is shown (naming the cap) on every run."""
    passed: set[str] = st.session_state.setdefault(_PASSED, set())
    if upload.file_id in passed:
        return True
    if guarded(lambda: check(upload.getvalue(), upload.name) or True):
        passed.add(upload.file_id)
        return True
    return False
