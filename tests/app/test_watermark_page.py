"""The Watermark page under AppTest: the default detection runs and shows its figures without errors."""
import pytest

from tests.app.helpers import plotly_charts, run_page


@pytest.fixture
def one_identity(tmp_path, monkeypatch):
    """A private secret and store holding one model identity with one user."""
    monkeypatch.setenv("DASH_WATERMARK_SECRET_FILE", str(tmp_path / "secret.key"))
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    from backend.watermark import registry

    model = registry.add_model("page-model")
    registry.add_user(model.address, "page-user")


def test_watermark_page_detects_on_first_render(one_identity):
    at = run_page("watermark.py")
    assert not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) >= 3  # evidence by level, per-sentence contributions, registry
    messages = [m.value for m in at.info] + [m.value for m in at.success]
    assert any("usable of" in m for m in messages), messages
    assert len(at.tabs) == 4
    labels = [m.label for m in at.metric]
    assert "keys scored" in labels and "z (model)" in labels  # IPMark searches the registry, level by level


def test_watermark_page_generates_and_checks_kgw(one_identity):
    at = run_page("watermark.py")
    at.number_input[0].set_value(2)  # B
    at.number_input[1].set_value(1)  # one sentence
    next(b for b in at.button if "Generate" in b.label).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "wm-last-generated" in at.session_state
    at.selectbox(key="wm-detect-method").set_value("kgw")
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("green tokens" in m.value for m in [*at.info, *at.success])
    labels = [m.label for m in at.metric]
    assert labels == ["z (tokens)"]  # KGW tests one model's key: no registry search, no user level
