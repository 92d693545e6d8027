"""A model unloaded to stay within the model memory budget loads again when a page needs it, and says so."""
import gc
import html
import os

import pytest

from backend.models import loading
from tests.app.helpers import run_page
from tests.support.tiny import build_tiny_model


@pytest.fixture
def one_model_budget(monkeypatch, tmp_path):
    """Two tiny models of this test's own and a budget (0.7 MB) that holds one of them (about 0.42 MB)."""
    ids = {key: f"resid-app-{key}" for key in ("x", "y")}
    extra = ";".join(f"{ids[key]}={build_tiny_model('llama', tmp_path / key, seed=i)}" for i, key in enumerate(ids))
    monkeypatch.setenv("DASH_EXTRA_MODELS", os.environ["DASH_EXTRA_MODELS"] + ";" + extra)
    monkeypatch.setenv("DASH_DEFAULT_MODEL", ids["x"])
    monkeypatch.setenv("DASH_MODEL_MEMORY_MB", "0.7")
    # a residency of the test's own: models other tests hold (and keep in memory) do not count against it
    monkeypatch.setattr(loading, "_resident", loading.Residency(lambda handle: handle.model, loading.in_use))
    return ids


def _infos(at) -> list[str]:
    return [html.unescape(i.value) for i in at.info]


def test_switching_back_to_an_evicted_model_reloads_it_with_a_note(one_model_budget):
    x, y = one_model_budget["x"], one_model_budget["y"]
    at = run_page()
    assert not any("loaded again" in text for text in _infos(at))
    at.sidebar.selectbox[0].set_value(y).run()
    gc.collect()
    from backend.models import loaded_ids

    assert x not in loaded_ids() and y in loaded_ids()
    at.sidebar.selectbox[0].set_value(x).run()
    assert not at.exception
    assert any("was loaded again" in text and "DASH_MODEL_MEMORY_MB" in text for text in _infos(at))
    assert any("of 1 MB" in c.value for c in at.sidebar.caption)  # the sidebar shows use against the budget
