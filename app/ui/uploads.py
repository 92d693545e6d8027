"""What a user sends, bounded before the server works on it: an uploaded file checked against its caps once,
before a page parses it, and the length of a typed prompt (refused in the browser)."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.ui.guarded import guarded

# A prompt fills at most a small model's context (a few thousand tokens); the context check refuses a longer one
# later, but only after the server has received and tokenised it.
PROMPT_MAX_CHARS = 20_000
PASTED_TARGETS_MAX_CHARS = 1_000_000  # as much text as a watermark upload may hold

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
