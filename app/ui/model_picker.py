"""Sidebar model picker shared by all pages. Loading is cached per process by the backend,
so switching back to a model that is already in memory is instant."""
from __future__ import annotations

import streamlit as st

from app.session import MODEL_KEY, choose_model, selected_model_id
from app.ui.guarded import guarded
from backend.models import ModelHandle, list_models, load, loaded_ids


def model_picker() -> None:
    specs = {spec.id: spec for spec in list_models()}
    current = selected_model_id()
    options = list(specs) if current in specs else [current, *specs]
    st.sidebar.selectbox("Model", options, index=options.index(current), key=MODEL_KEY,
                         on_change=choose_model,  # picked by hand: every page opens on it from now on
                         format_func=lambda mid: specs[mid].display_name if mid in specs else mid,
                         help="Allowlisted models (data/models/registry.json and DASH_EXTRA_MODELS).")
    in_memory = loaded_ids()
    if in_memory:
        st.sidebar.caption("In memory: " + ", ".join(in_memory))


def current_model() -> ModelHandle | None:
    """The selected model, loaded with a progress indicator; None (with an error shown) if it cannot be."""
    model_id = selected_model_id()
    if model_id in loaded_ids():
        return load(model_id)
    with st.status(f"Loading {model_id} …", expanded=True) as box:
        bar = st.progress(0.0)

        def progress(fraction: float, message: str) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=message)

        handle = guarded(lambda: load(model_id, progress=progress))
        box.update(label=f"Loaded {model_id}" if handle else f"Could not load {model_id}",
                   state="complete" if handle else "error", expanded=handle is None)
    return handle
