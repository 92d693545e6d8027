""""Inspect this prompt": a button any page puts beside a prompt it shows; it opens the Inspect page on that prompt.

The prompt travels in session state (never in the URL): the Inspect page takes it once, into its own prompt box.
"""
from __future__ import annotations

import streamlit as st

from app.views import PAGES_DIR

PROMPT_KEY = "inspect-prompt"  # the Inspect page's prompt box
_INCOMING = "inspect-incoming"  # a prompt sent from another page, taken by the Inspect page on its next run
INSPECT_PAGE = PAGES_DIR / "inspect.py"


def inspect_button(prompt: str, key: str, label: str = "Inspect this prompt") -> None:
    """A button that opens Inspect on `prompt` (logit lens, attribution to every head, attention patterns)."""
    if st.button(label, key=key, icon=":material/search_insights:", disabled=not prompt.strip(),
                 help="Open this prompt on the Inspect page: logit lens, direct logit attribution, attention."):
        st.session_state[_INCOMING] = prompt
        st.switch_page(str(INSPECT_PAGE))


def take_incoming_prompt() -> bool:
    """On the Inspect page, before its prompt box is drawn: a prompt another page sent replaces the box's text."""
    if _INCOMING not in st.session_state:
        return False
    st.session_state[PROMPT_KEY] = st.session_state.pop(_INCOMING)
    return True
