"""Sidebar model picker shared by all pages. Loaded models stay resident in the backend under the server's
model memory budget, so switching back to a model that is still in memory is instant; one evicted to make
room loads again, with a note saying why."""
from __future__ import annotations

import streamlit as st

from app.session import MODEL_KEY, choose_model, selected_model_id
from app.ui.guarded import guarded
from app.ui.text import literal
from backend.models import ModelHandle, list_models, load, loaded_ids, memory_use
from backend.unicode_text import visible


def model_picker() -> None:
    specs = {spec.id: spec for spec in list_models()}
    current = selected_model_id()
    options = list(specs) if current in specs else [current, *specs]
    # no index: the value is the session state's (selected_model_id set it); an index beside it made Streamlit warn
    # "model_id set via the Session State API" in the server's log
    st.sidebar.selectbox("Model", options, key=MODEL_KEY,
                         on_change=choose_model,  # picked by hand: every page opens on it from now on
                         format_func=lambda mid: visible(specs[mid].display_name if mid in specs else mid),
                         help="Allowlisted models (data/models/registry.json and DASH_EXTRA_MODELS).")
    in_memory = loaded_ids()
    if in_memory:
        used, budget = memory_use()
        st.sidebar.caption("In memory: " + literal(", ".join(reversed(in_memory))) + f" ({used / 2**20:,.0f} of "
                           f"{budget / 2**20:,.0f} MB)", help="Models stay loaded while they fit the server's model "
                           "memory budget (DASH_MODEL_MEMORY_MB); past it, the least recently used one that no "
                           "computation is using is unloaded, and loads again when a page needs it.")


def current_model() -> ModelHandle | None:
    """The selected model, loaded with a progress indicator; None (with an error shown) if it cannot be."""
    model_id = selected_model_id()
    # One slot whether this run loads the model or finds it in memory: what the page draws after it keeps its place
    # from run to run (a loading box drawn only on the run that loaded moved everything after it down one element,
    # and Streamlit drew it afresh at the next run: an open expander shut).
    slot = st.empty()
    if model_id in loaded_ids():
        return load(model_id)
    shown = literal(model_id)  # an id is data: a bidi override is written out, never applied
    with slot.container():
        with st.status(f"Loading {shown} …", expanded=True) as box:
            bar = st.progress(0.0)

            def progress(fraction: float, message: str) -> None:
                bar.progress(min(max(fraction, 0.0), 1.0), text=message)

            handle = guarded(lambda: load(model_id, progress=progress))
            box.update(label=(f"Reloaded {shown}" if handle.reloaded else f"Loaded {shown}") if handle
                       else f"Could not load {shown}", state="complete" if handle else "error",
                       expanded=handle is None)
        if handle is not None and handle.reloaded:
            st.info(f"{literal(handle.display_name)} was loaded again ({handle.load_seconds:.1f} s): it had been "
                    "unloaded to keep the server's models within its memory budget (DASH_MODEL_MEMORY_MB) while it "
                    "was not in use.")
    return handle
