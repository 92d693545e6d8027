"""The sidebar model picker takes its value from the session state alone: a default index beside it made Streamlit
log 'The widget with key "model_id" was created with a default value but also had its value set via the Session
State API' on every page that opened on a model other than the list's first."""
from streamlit.elements.lib import policies

from backend.models import default_model_id, list_models
from tests.app.helpers import run_page


def test_the_picker_opens_on_the_selected_model_without_the_session_state_warning(monkeypatch):
    warned = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # Streamlit warns once per process
    monkeypatch.setattr(policies._LOGGER, "warning", lambda message, *args, **kw: warned.append(message % args))
    ids = [spec.id for spec in list_models()]
    assert ids.index(default_model_id()) > 0, "the case that warned: the selected model is not the first option"
    at = run_page("runs.py")
    assert at.sidebar.selectbox[0].value == default_model_id()
    assert not [w for w in warned if "Session State API" in w], warned


def test_the_page_keeps_its_layout_on_the_run_that_loads_the_model(monkeypatch):
    """The run that loads the model draws its loading box, the next does not: in one slot either way, so what the
    page draws after it keeps its place (moved one element down on that run, Streamlit drew an open expander afresh,
    closed: Decoding's "Parameters and budgets" shut at the first change after a model loaded)."""
    from streamlit.testing.v1 import AppTest

    from backend.models import loading

    # a residency of the test's own: the model is not in memory yet, whatever other tests loaded
    monkeypatch.setattr(loading, "_resident", loading.Residency(lambda handle: handle.model, loading.in_use))

    def page():
        import streamlit as st

        from app.ui.model_picker import current_model

        current_model()
        with st.expander("Parameters"):
            st.number_input("Seed", key="seed")

    at = AppTest.from_function(page, default_timeout=120)
    places = []
    for _ in range(2):  # loads the model, then finds it in memory
        at.run()
        assert not at.exception
        places.append([i for i, node in enumerate(at.main.children.values()) if node.type == "expander"])
    assert loading.loaded_ids(), "the first run loaded the model"
    assert places[0] == places[1] != []
