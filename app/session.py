"""Session state shared by all pages: which model is selected."""
from __future__ import annotations

import streamlit as st

from backend.models import default_model_id

MODEL_KEY = "model_id"  # the sidebar picker's value
CHOSEN_KEY = "model-chosen"  # set once the user picks a model themselves (sidebar or a page's button)
RECOMMENDED_KEY = "model-recommended"  # the model the current page opened on as its recommendation, else None


def selected_model_id() -> str:
    if MODEL_KEY not in st.session_state:
        st.session_state[MODEL_KEY] = default_model_id()
    return st.session_state[MODEL_KEY]


def choose_model(model_id: str | None = None) -> None:
    """Record a model picked by the user (callback of the picker, or of a page's "use this model" button): from now
    on every page opens on it."""
    if model_id is not None:
        st.session_state[MODEL_KEY] = model_id
    st.session_state[CHOSEN_KEY] = True


def page_model(chosen: bool, current: str, recommended: str | None, default: str, default_is_embedded: bool) -> str:
    """The model a page opens on: the user's own choice if they made one; else the page's recommended model
    (only when the configured default is the embedded one: a deployment's own default is never overridden);
    else the default. A recommendation is for its page alone: MT heads opening on the translator must not carry
    the translator to the next page, where it would be a cold computation on a model nobody picked."""
    if chosen:
        return current
    if recommended is not None and default_is_embedded:
        return recommended
    return default


def open_page_on(recommended: str | None) -> None:
    """Before the picker is drawn: select `page_model` for this page, and remember when it is the page's
    recommendation (the page then says why it opened on that model)."""
    from backend.models.allowlist import get_spec

    default = default_model_id()
    chosen = bool(st.session_state.get(CHOSEN_KEY))
    model_id = page_model(chosen, selected_model_id(), recommended, default, get_spec(default).is_embedded)
    st.session_state[MODEL_KEY] = model_id
    st.session_state[RECOMMENDED_KEY] = model_id if model_id == recommended and not chosen else None


def opened_on_recommendation(model_id: str) -> bool:
    """Whether this page opened on `model_id` as its recommendation (the page then says why)."""
    return st.session_state.get(RECOMMENDED_KEY) == model_id
