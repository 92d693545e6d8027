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
