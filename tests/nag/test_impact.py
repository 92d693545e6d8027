"""Impact extraction: the hook impact against a manual computation of |up_proj(norm(x))| over valid tokens,
batched vs naive paths, and captum's act x grad (shapes and padding invariance of every registered impact:
test_contracts.py)."""
import numpy as np
import torch

from backend.models import load
from backend.models.architecture import decoder_layers, mlp_input_norm, mlp_up_proj
from backend.nag.extract import ExtractConfig, extract_batched, extract_naive, length_batches, pad_batch, pad_id
from backend.nag.impact import IMPACTS

TEXTS = ["short one", "a somewhat longer document about enzymes and heat", "mid length text here"]


def _encode(handle, texts):
    return [handle.tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]


def _manual_up_abs(handle, tokens):
    """Per layer: norm module applied to the captured MLP-block input, then the up projection by hand."""
    model, captured, handles = handle.model, {}, []
    gpt2 = model.config.model_type == "gpt2"
    for layer in range(len(decoder_layers(model))):
        norm = mlp_input_norm(model, layer)
        handles.append(norm.register_forward_pre_hook(
            lambda m, args, layer=layer: captured.__setitem__(layer, args[0].detach())))
    with torch.no_grad():
        model(input_ids=torch.tensor([tokens]))
    for h in handles:
        h.remove()
    rows = []
    for layer in range(len(decoder_layers(model))):
        norm = mlp_input_norm(model, layer)
        proj = mlp_up_proj(model, layer)
        with torch.no_grad():
            x = norm(captured[layer])
            up = x @ proj.weight + proj.bias if gpt2 else x @ proj.weight.T
        rows.append(up.abs()[0].mean(0))
    return torch.stack(rows)


def test_hook_impact_equals_manual_up_projection_over_valid_tokens(tiny_handle):
    encoded = _encode(tiny_handle, TEXTS)
    ids, mask = pad_batch(encoded, pad_id(tiny_handle), "cpu")
    batched = IMPACTS["up_abs"].run(tiny_handle.model, ids, mask)
    for row, tokens in enumerate(encoded):
        torch.testing.assert_close(batched[row], _manual_up_abs(tiny_handle, tokens), atol=1e-5, rtol=1e-4)


def test_batched_and_naive_paths_give_the_same_features():
    handle = load("tiny-llama")
    config = ExtractConfig(top_k=8, max_length=40, batch_tokens=64)
    texts = TEXTS + TEXTS[:1]
    for a, b in zip(extract_batched(handle, texts, config), extract_naive(handle, texts, config)):
        assert (a.top[:, :8] == b.top[:, :8]).all()
        assert a.n_tokens == b.n_tokens and a.used_tokens == b.used_tokens


def test_act_x_grad_matches_manual_autograd():
    handle = load("tiny-llama")
    model = handle.model
    encoded = _encode(handle, TEXTS)
    ids, mask = pad_batch(encoded, pad_id(handle), "cpu")
    ours = IMPACTS["act_x_grad"].run(model, ids, mask)
    outs, hooks = {}, []
    for layer in range(handle.info.n_layers):
        def keep(m, args, out, layer=layer):
            out.retain_grad()
            outs[layer] = out
        hooks.append(mlp_up_proj(model, layer).register_forward_hook(keep))
    try:
        logp = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits[:, :-1], -1)
        (logp.gather(-1, ids[:, 1:, None])[..., 0] * mask[:, 1:]).sum().backward()
    finally:
        for h in hooks:
            h.remove()
        model.zero_grad(set_to_none=True)
    m = mask[:, :, None].float()
    manual = torch.stack([((outs[l] * outs[l].grad).abs() * m).sum(1) / m.sum(1) for l in sorted(outs)], 1)
    torch.testing.assert_close(ours, manual.detach(), atol=1e-5, rtol=1e-4)


def test_truncation_and_context_limit():
    handle = load("tiny-llama")  # 256 positions
    long_text = "word " * 400
    feats = extract_batched(handle, [long_text, "tiny"], ExtractConfig(max_length=1000))
    assert feats[0].n_tokens > 256 and feats[0].used_tokens == 256
    assert feats[1].used_tokens == feats[1].n_tokens
    assert feats[0].top.shape == (handle.info.n_layers, 32)
    assert np.all(np.diff(np.sort(feats[0].top, axis=1), axis=1) > 0)  # distinct neurons per layer


def test_length_batches_cover_every_document_once_within_both_limits():
    lengths = [5, 50, 6, 48, 7, 51, 5, 120, 49]
    batches = length_batches(lengths, batch_tokens=160, max_padding=0.1)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for rows in batches:
        width, real = max(lengths[i] for i in rows), sum(lengths[i] for i in rows)
        assert len(rows) == 1 or (len(rows) * width <= 160 and len(rows) * width <= 1.1 * real)
    grouped = [[lengths[i] for i in b] for b in batches]
    assert [5, 5] in grouped and [48, 49, 50] in grouped  # short documents are never padded to 50 tokens
