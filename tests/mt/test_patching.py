"""Patching and attribution on tiny random models (Llama and Qwen3: grouped-query attention)."""
import random

import numpy as np
import pytest
import torch

from backend.models import load
from backend.models.hooks import HeadEdit, capture
from backend.mt.attribution import attribute, rank_correlation
from backend.mt.examples import build_example
from backend.mt.patching import patch_one, patch_scores
from backend.mt.prompts import prompt_pair


@torch.no_grad()
def target_logp(model, prefix: tuple[int, ...], target: int) -> float:
    """log p(target | prefix) from a plain captured forward: the unpatched reference."""
    device = next(model.parameters()).device
    out = capture(model, torch.tensor([list(prefix)], device=device))
    return float(torch.log_softmax(out.logits[0, -1].float(), dim=-1)[target])


@pytest.fixture(params=["tiny-llama", "tiny-qwen3"])
def handle(request):
    return load(request.param)


def _example(handle, data, head_type="language"):
    pair = prompt_pair(data, 0, "en", "fr", head_type, 2, random.Random(0), "de")
    return build_example(handle, pair, max_answer_tokens=4)


def test_example_position_is_the_max_kl_answer_position(handle, tiny_data):
    ex = _example(handle, tiny_data)
    info = handle.info
    assert ex.clean_heads.shape == ex.corrupt_heads.shape == (info.n_layers, info.n_heads, info.head_dim)
    assert 0 <= ex.answer_offset < 4 and ex.kl >= 0
    # Independently: KL(clean || corrupt) at every teacher-forced answer position; the example holds the max.
    pair = prompt_pair(tiny_data, 0, "en", "fr", "language", 2, random.Random(0), "de")
    tok = handle.tokenizer
    clean, corrupt = tok(pair.clean)["input_ids"], tok(pair.corrupt)["input_ids"]
    answer = tok(pair.answer, add_special_tokens=False)["input_ids"][:4]
    clean_logits = capture(handle.model, torch.tensor([clean + answer])).logits[0]
    corrupt_logits = capture(handle.model, torch.tensor([corrupt + answer])).logits[0]
    clean_logp = torch.log_softmax(clean_logits, -1)[len(clean) - 1:-1]
    corrupt_logp = torch.log_softmax(corrupt_logits, -1)[len(corrupt) - 1:-1]
    kl = (clean_logp.exp() * (clean_logp - corrupt_logp)).sum(-1)
    assert ex.answer_offset == int(kl.argmax()) and ex.kl == pytest.approx(float(kl.max()), rel=1e-5)
    assert ex.target == answer[ex.answer_offset]
    assert target_logp(handle.model, ex.corrupt_prefix, ex.target) == pytest.approx(ex.corrupt_logp, abs=1e-4)


def test_patching_a_head_with_its_own_clean_value_changes_nothing(handle, tiny_data):
    model, info = handle.model, handle.info
    ids = torch.tensor([list(range(60, 90))])
    clean = capture(model, ids, heads=range(info.n_layers))
    for layer in range(info.n_layers):
        for head in range(info.n_heads):
            own = clean.head_outputs[layer][0, -1, head]
            edit = HeadEdit(layer, (head,), "replace", own, position=-1)
            patched = capture(model, ids, head_edits=[edit])
            assert torch.equal(patched.logits, clean.logits)


def test_batched_patching_matches_the_replace_reference(handle, tiny_data):
    ex = _example(handle, tiny_data)
    mean_clean = ex.clean_heads + 0.5  # any replacement value
    delta = mean_clean - ex.corrupt_heads
    scores = patch_scores(handle.model, ex.corrupt_prefix, ex.target, delta, rows_per_batch=3)
    info = handle.info
    assert scores.shape == (info.n_layers, info.n_heads)
    base = target_logp(handle.model, ex.corrupt_prefix, ex.target)
    for layer in range(info.n_layers):
        for head in range(info.n_heads):
            ref = patch_one(handle.model, ex.corrupt_prefix, ex.target, layer, head, mean_clean[layer, head]) - base
            assert scores[layer, head] == pytest.approx(ref, abs=2e-4)
    assert np.abs(scores).max() > 0


def test_zero_delta_gives_zero_scores(handle, tiny_data):
    # Patching the corrupted run with its own values: nothing moves (up to batched-kernel rounding across rows).
    ex = _example(handle, tiny_data)
    scores = patch_scores(handle.model, ex.corrupt_prefix, ex.target, torch.zeros_like(ex.corrupt_heads))
    np.testing.assert_allclose(scores, 0.0, atol=1e-5)


def test_attribution_patching_is_grad_times_delta(handle, tiny_data):
    ex = _example(handle, tiny_data, "translation")
    delta = ex.clean_heads - ex.corrupt_heads + 0.1
    attr = attribute(handle.model, ex.corrupt_prefix, ex.target, delta, "attribution-patching")
    # By hand: gradient of log p(target) w.r.t. an additive offset on every head at the last position.
    model, info = handle.model, handle.info
    offsets = torch.zeros(info.n_layers, info.n_heads, info.head_dim, requires_grad=True)
    edits = [HeadEdit(layer, tuple(range(info.n_heads)), "add", offsets[layer], position=-1)
             for layer in range(info.n_layers)]
    from backend.models.hooks import Hooks
    with torch.enable_grad(), Hooks(model, head_edits=edits):
        logits = model(input_ids=torch.tensor([list(ex.corrupt_prefix)])).logits[0, -1]
        torch.log_softmax(logits, -1)[ex.target].backward()
    expected = (offsets.grad * delta).sum(-1).numpy()
    assert attr.shape == (info.n_layers, info.n_heads)
    np.testing.assert_allclose(attr, expected, rtol=1e-4, atol=1e-6)


def test_rank_correlation():
    a = np.arange(12.0).reshape(3, 4)
    assert rank_correlation(a, a * 2 + 1) == pytest.approx(1.0)
    assert rank_correlation(a, -a) == pytest.approx(-1.0)
    assert np.isnan(rank_correlation(a, np.zeros_like(a)))
