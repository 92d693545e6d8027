"""Session state shared by all pages: which model is selected."""
from __future__ import annotations

import streamlit as st

from backend.models import default_model_id

MODEL_KEY = "model_id"


def selected_model_id() -> str:
    if MODEL_KEY not in st.session_state:
        st.session_state[MODEL_KEY] = default_model_id()
    return st.session_state[MODEL_KEY]


def open_once_on(page: str, model_id: str | None) -> None:
    """On the first visit of `page` in this browser session, switch from the configured default model to the
    page's recommended `model_id` (a later choice in the sidebar is kept). Call before the picker is drawn."""
    from backend.models.registry import get_spec

    seen = f"opened-{page}"
    if st.session_state.get(seen) or model_id is None:
        return
    st.session_state[seen] = True
    if selected_model_id() == default_model_id() and get_spec(default_model_id()).is_embedded:
        st.session_state[MODEL_KEY] = model_id
        st.session_state[f"recommended-{page}"] = model_id
