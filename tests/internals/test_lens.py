"""The logit lens's last read-out is the model's own output distribution; earlier ones read each residual."""
import numpy as np
import pytest
import torch

from backend.internals.config import LensConfig
from backend.internals.lens import compute_lens
from tests.internals.helpers import PROMPT, VARIANTS


def _own_probs(model, tokenizer, prompt):
    ids = torch.tensor([tokenizer(prompt)["input_ids"]])
    with torch.no_grad():
        out = model(input_ids=ids, output_hidden_states=True)
    return torch.softmax(out.logits[0].float(), -1), out.hidden_states


def _last_layer_is_the_output(model, tokenizer):
    result = compute_lens(model, tokenizer, LensConfig(prompt=PROMPT, top_k=5))
    probs, hidden = _own_probs(model, tokenizer, PROMPT)
    top = probs.topk(5, dim=-1)
    assert np.array_equal(result.top_ids[-1], top.indices.numpy())
    assert np.allclose(result.top_probs[-1], top.values.numpy(), atol=1e-6)
    assert result.predicted_id == int(probs[-1].argmax())
    assert result.predicted_prob[-1] == pytest.approx(float(probs[-1].max()), abs=1e-6)
    assert result.predicted_rank[-1] == 0 and result.n_layers == len(hidden) - 1
    return result


def test_last_read_out_is_the_models_own_distribution(tiny_handle):
    result = _last_layer_is_the_output(tiny_handle.model, tiny_handle.tokenizer)
    assert len(result.tokens) == len(tiny_handle.tokenizer(PROMPT)["input_ids"]) == len(PROMPT)
    json = result.to_json()
    assert len(json["layers"]) == result.n_layers + 1 and json["layers"][0]["layer"] == 0
    assert len(json["layers"][1]["positions"]) == len(result.tokens)
    assert set(json["layers"][1]["positions"][0]["top"][0]) == {"token", "id", "prob"}
    assert len(json["final"]["prob_by_layer"]) == result.n_layers + 1


def test_soft_capped_output_is_matched():
    model, tokenizer = VARIANTS["gemma3-softcap"]()
    assert _last_layer_is_the_output(model, tokenizer).softcap == 0.05


def test_an_intermediate_read_out_is_the_residual_through_the_final_norm(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_lens(model, tokenizer, LensConfig(prompt=PROMPT, top_k=3, position=4))
    _, hidden = _own_probs(model, tokenizer, PROMPT)
    norm = model.transformer.ln_f if model.config.model_type == "gpt2" else model.model.norm
    with torch.no_grad():
        logits = model.get_output_embeddings()(norm(hidden[1][0]))
    assert np.array_equal(result.top_ids[1], logits.topk(3, -1).indices.numpy())
    assert result.position == 4


def test_a_tracked_token_is_read_out_at_every_layer_like_the_final_prediction(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_lens(model, tokenizer, LensConfig(prompt=PROMPT, position=4, track="e"))
    probs, hidden = _own_probs(model, tokenizer, PROMPT)
    tracked = tokenizer("e", add_special_tokens=False)["input_ids"][0]
    assert result.tracked_id == tracked and result.tracked_token == "e"
    last = probs[4]  # the model's own distribution at the traced position: the last read-out
    assert result.tracked_prob[-1] == pytest.approx(float(last[tracked]), abs=1e-6)
    assert result.tracked_rank[-1] == int((last > last[tracked]).sum())
    norm = model.transformer.ln_f if model.config.model_type == "gpt2" else model.model.norm
    with torch.no_grad():  # layer 1's read-out, by hand
        first = torch.softmax(model.get_output_embeddings()(norm(hidden[1][0, 4])).float(), -1)
    assert result.tracked_prob[1] == pytest.approx(float(first[tracked]), abs=1e-5)
    assert result.tracked_rank[1] == int((first > first[tracked]).sum())
    same = compute_lens(model, tokenizer, LensConfig(prompt=PROMPT, position=4, track=result.predicted_token))
    assert np.array_equal(same.tracked_rank, same.predicted_rank) and same.to_json()["tracked"]["token"] == \
        result.predicted_token
    assert compute_lens(model, tokenizer, LensConfig(prompt=PROMPT)).to_json()["tracked"] is None
