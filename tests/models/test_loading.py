import json
import os

import pytest

from backend.errors import UserError
from backend.models import get_spec, list_models, load
from backend.models.fingerprint import fingerprint_dir


def test_registry_lists_embedded_default_and_extra_models():
    ids = [spec.id for spec in list_models()]
    assert "smollm2-135m-instruct" in ids
    assert get_spec("smollm2-135m-instruct").is_embedded
    assert "tiny-llama" in ids


def test_unknown_model_is_refused_with_the_allowlist():
    with pytest.raises(UserError, match="Allowlisted models"):
        load("/etc/passwd")


def test_model_over_budget_is_refused_before_loading(monkeypatch):
    monkeypatch.setenv("DASH_MAX_PARAMS", "1000")
    extra = os.environ["DASH_EXTRA_MODELS"]
    monkeypatch.setenv("DASH_EXTRA_MODELS", extra.replace("tiny-qwen2=", "tiny-qwen2-budget="))
    with pytest.raises(UserError, match="budget"):
        load("tiny-qwen2-budget")


def test_loading_twice_returns_the_same_object():
    assert load("tiny-llama") is load("tiny-llama")


def test_bad_extra_models_entry_is_a_user_error(monkeypatch):
    monkeypatch.setenv("DASH_EXTRA_MODELS", "no-equals-sign")
    with pytest.raises(UserError, match="id=source"):
        list_models()


def test_fingerprint_is_stable_and_sensitive_to_weights(tmp_path):
    from tests.support.tiny import build_tiny_model

    a = build_tiny_model("llama", tmp_path / "a", seed=0)
    b = build_tiny_model("llama", tmp_path / "b", seed=0)
    c = build_tiny_model("llama", tmp_path / "c", seed=1)
    assert fingerprint_dir(a) == fingerprint_dir(b)
    assert fingerprint_dir(a) != fingerprint_dir(c)
    config = json.loads((a / "config.json").read_text())
    config["rms_norm_eps"] = 1e-3
    (b / "config.json").write_text(json.dumps(config))
    assert fingerprint_dir(a) != fingerprint_dir(b)


def test_generate_runs_offline_and_rejects_bad_input(tiny_handle):
    from backend.models.generate import generate

    out = generate(tiny_handle, "Hello", max_new_tokens=5)
    assert len(out.token_ids) <= 5
    with pytest.raises(UserError):
        generate(tiny_handle, "   ")
    with pytest.raises(UserError):
        generate(tiny_handle, "Hello", max_new_tokens=0)


def test_prompt_longer_than_context_is_refused(tiny_handle):
    from backend.models.generate import generate

    with pytest.raises(UserError, match="context"):
        generate(tiny_handle, "word " * 400, max_new_tokens=2)
