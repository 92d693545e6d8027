from dataclasses import dataclass

from backend.store import ModelRef, cached
from tests.app.helpers import plotly_charts, run_page


@dataclass(frozen=True)
class Cfg:
    n: int


def test_home_shows_model_store_and_figure():
    at = run_page()
    assert not at.error, [e.value for e in at.error]
    assert any("Model" == s.value for s in at.subheader)
    assert any(m.label == "Artifacts" for m in at.metric)
    assert plotly_charts(at), "the runs-per-feature figure is missing"
    assert at.sidebar.selectbox[0].value == "tiny-llama"


def test_runs_page_lists_and_reopens_runs():
    cached("apptest", "run", ModelRef("tiny-llama", "abc"), Cfg(1), lambda: {"answer": 42})
    at = run_page("runs.py")
    assert not at.error, [e.value for e in at.error]
    assert plotly_charts(at), "the runs timeline is missing"
    assert len(at.dataframe) >= 1
    assert any(j for j in at.json)


def test_switching_models_keeps_loaded_models_in_memory():
    from backend.models import load, loaded_ids

    at = run_page()
    llama = load("tiny-llama")
    at.sidebar.selectbox[0].set_value("tiny-gpt2").run()
    assert not at.exception and not at.error
    assert any("tiny-gpt2" in m.value for m in at.markdown)
    assert {"tiny-llama", "tiny-gpt2"} <= set(loaded_ids())
    at.sidebar.selectbox[0].set_value("tiny-llama").run()
    assert load("tiny-llama") is llama  # not reloaded


def test_a_model_outside_the_allowlist_shows_an_error_not_a_traceback():
    from streamlit.testing.v1 import AppTest

    from tests.app.helpers import MAIN

    at = AppTest.from_file(MAIN, default_timeout=60)
    at.session_state["model_id"] = "/etc/passwd"
    at.run()
    assert not at.exception
    assert any("Allowlisted models" in e.value for e in at.error)
