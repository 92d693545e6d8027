"""Session state shared by all pages: which model is selected."""
from __future__ import annotations

import streamlit as st

from backend.models import default_model_id

MODEL_KEY = "model_id"


def selected_model_id() -> str:
    if MODEL_KEY not in st.session_state:
        st.session_state[MODEL_KEY] = default_model_id()
    return st.session_state[MODEL_KEY]
