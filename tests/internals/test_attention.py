"""Attention patterns equal the model's own `output_attentions` under eager attention; a head's vocabulary
projection equals a brute-force computation from its values, its W_O slice and the unembedding."""
import numpy as np
import pytest
import torch

from backend.internals.attention import compute_attention, compute_head
from backend.internals.config import AttentionConfig, HeadConfig
from tests.internals.helpers import PROMPT, VARIANTS


def _eager(model, ids):
    previous = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            return model(input_ids=ids, output_attentions=True, output_hidden_states=True)
    finally:
        model.set_attn_implementation(previous)


def test_rows_sum_to_one_and_equal_output_attentions(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    own = _eager(model, ids).attentions
    for layer, head in ((0, 0), (1, 3)):  # head 3 shares kv head 1 with head 2 (GQA)
        result = compute_attention(model, tokenizer, AttentionConfig(prompt=PROMPT, layer=layer, head=head))
        assert np.allclose(result.pattern.sum(axis=1), 1.0, atol=1e-5)
        assert np.allclose(result.pattern, own[layer][0, head].numpy(), atol=1e-6)
        assert np.allclose(np.triu(result.pattern, 1), 0.0)  # causal
    assert len(result.to_json()["pattern"]) == ids.shape[1]


def _values(model, layer, hidden):
    """`[heads, T, dh]` value vectors per query head, from the layer's input through its own modules."""
    block = model.transformer.h[layer] if model.config.model_type == "gpt2" else model.model.layers[layer]
    if model.config.model_type == "gpt2":
        v = block.attn.c_attn(block.ln_1(hidden))[..., 2 * model.config.n_embd:]
        return v[0].reshape(v.shape[1], model.config.n_head, -1).transpose(0, 1)
    v = block.self_attn.v_proj(block.input_layernorm(hidden))[0]
    kv = v.reshape(v.shape[0], model.config.num_key_value_heads, -1).transpose(0, 1)
    return kv.repeat_interleave(model.config.num_attention_heads // model.config.num_key_value_heads, dim=0)


def _brute_force_effects(model, tokenizer, layer, head, position):
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    gpt2 = model.config.model_type == "gpt2"
    final_norm = model.transformer.ln_f if gpt2 else model.model.norm
    captured = []
    hook = final_norm.register_forward_pre_hook(lambda m, a: captured.append(a[0]))
    try:
        out = _eager(model, ids)
    finally:
        hook.remove()
    with torch.no_grad():
        values = _values(model, layer, out.hidden_states[layer])  # [H, T, dh]
        z_all = torch.einsum("hk,hkd->hd", out.attentions[layer][0, :, position], values)  # every head's output
        block = model.transformer.h[layer] if gpt2 else model.model.layers[layer]
        proj = block.attn.c_proj if gpt2 else block.self_attn.o_proj
        w = proj.weight.T if gpt2 else proj.weight  # [d, H * dh]
        dh = z_all.shape[1]
        write = sum(w[:, head * dh + k] * z_all[head, k] for k in range(dh))  # the head's slice, column by column
        if hasattr(block, "pre_feedforward_layernorm"):  # Gemma 3: post-norm with the whole output's scale
            whole = proj(z_all.reshape(1, -1))[0]
            gain = 1.0 + block.post_attention_layernorm.weight
            write = write / torch.sqrt(whole.pow(2).mean() + block.post_attention_layernorm.eps) * gain
        final = captured[0][0, position]
        if gpt2:
            scale = torch.sqrt(final.var(unbiased=False) + final_norm.eps)
            vec = (write - write.mean()) / scale * final_norm.weight
        else:
            eps = getattr(final_norm, "variance_epsilon", getattr(final_norm, "eps", None))
            gain = final_norm.weight + (1.0 if "Gemma" in type(final_norm).__name__ else 0.0)
            vec = write / torch.sqrt(final.pow(2).mean() + eps) * gain
        return torch.stack([model.get_output_embeddings().weight[i] @ vec
                            for i in range(model.get_output_embeddings().weight.shape[0])])


def _check_head(model, tokenizer, layer, head, position):
    result = compute_head(model, tokenizer, HeadConfig(prompt=PROMPT, layer=layer, head=head, position=position,
                                                       top_k=5))
    effects = _brute_force_effects(model, tokenizer, layer, head, position)
    top, bottom = effects.topk(5), (-effects).topk(5)
    assert [e.id for e in result.promoted] == top.indices.tolist()
    assert [e.id for e in result.suppressed] == bottom.indices.tolist()
    assert np.allclose([e.logit for e in result.promoted], top.values.numpy(), atol=2e-5)
    assert np.allclose([e.logit for e in result.suppressed], (-bottom.values).numpy(), atol=2e-5)
    assert result.pattern.shape == (len(PROMPT), len(PROMPT))


def test_head_vocabulary_projection_equals_brute_force(tiny_handle):
    _check_head(tiny_handle.model, tiny_handle.tokenizer, 1, 3, -1)
    _check_head(tiny_handle.model, tiny_handle.tokenizer, 0, 1, 8)


def test_head_projection_with_biases():
    model, tokenizer = VARIANTS["llama-biases"]()
    _check_head(model, tokenizer, 1, 2, -1)
