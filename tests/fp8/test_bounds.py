"""Bounds hold: observed logits on random inputs (any norm before the input norm) and on sample texts never
exceed them; the recomputed logits are the model's own; scales and refusals."""
import re
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from backend.errors import UserError
from backend.fp8.bounds import BoundsConfig, bounds, compute_bounds
from backend.fp8.geometry import _qk_norm_factors, check_supported, layer_factors
from backend.fp8.observed import computed_pairs, layer_logits
from backend.models import load
from backend.models.architecture import attention_qk_weights, layer_type
from backend.models.hooks import capture

WEIGHTS_ONLY = BoundsConfig(n_texts=0)


def test_flags_per_architecture(tiny_handle):
    result = compute_bounds(tiny_handle, WEIGHTS_ONLY)
    model_type = tiny_handle.info.model_type
    assert result.rope == (model_type != "gpt2")
    assert result.qk_norm == (model_type in ("qwen3", "gemma3_text"))
    assert result.augmented == (model_type in ("gpt2", "qwen2"))  # LayerNorm bias / q,k biases folded in
    assert result.sigma.shape == result.bound.shape == (tiny_handle.info.n_layers, tiny_handle.info.n_heads)
    assert (result.bound_rotation_safe >= result.bound_rank_aware * (1 - 1e-6)).all()
    assert result.check_max_rel_error < 1e-4
    assert np.allclose(result.scale, 448.0 / result.layer_bound, rtol=1e-6)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_bound_never_exceeded_on_random_inputs(tiny_handle, scale):
    """Random residual vectors of any magnitude: the input norm maps them onto the assumed norm ball."""
    result = compute_bounds(tiny_handle, WEIGHTS_ONLY)
    gen = torch.Generator().manual_seed(7)
    x = scale * torch.randn(8, 24, tiny_handle.info.hidden_size, generator=gen)
    for layer in range(tiny_handle.info.n_layers):
        scores = layer_logits(tiny_handle.model, layer, x).abs()  # [batch, heads, seq, seq]
        assert (scores.amax(dim=(0, 2, 3)).numpy() <= result.bound[layer]).all()
        diagonal = scores.diagonal(dim1=-2, dim2=-1).amax(dim=(0, 2)).numpy()  # offset 0: no rotation between
        assert (diagonal <= result.bound_rank_aware[layer] * (1 + 1e-5)).all()


def test_adversarial_input_approaches_the_rank_aware_bound():
    """x along the top eigenvector of the symmetric part of M: S_00 = d * lambda, which is <= d * sigma."""
    handle = load("tiny-llama")
    result = compute_bounds(handle, WEIGHTS_ONLY)
    factors = layer_factors(handle.model, 0)
    m = factors.a[0, 0].double().T @ factors.b[0].double()  # head 0 uses kv head 0
    values, vectors = torch.linalg.eigh((m + m.T) / 2)
    top = int(values.abs().argmax())
    x = (1e3 * vectors[:, top]).float().reshape(1, 1, -1)  # large: the RMSNorm eps is negligible
    s00 = float(layer_logits(handle.model, 0, x)[0, 0, 0, 0].abs())
    assert s00 <= result.bound_rank_aware[0, 0] * (1 + 1e-5)
    assert s00 > 0.3 * result.bound_rank_aware[0, 0]  # the bound is not vacuous


def test_recomputed_logits_reproduce_the_models_attention(tiny_handle):
    """softmax(computed logits) equals the model's own attention probabilities, GQA groups included, and
    Gemma's sliding-window layer sees fewer keys than a causal one (11 tokens > its window)."""
    ids = torch.randint(0, 250, (2, 11), generator=torch.Generator().manual_seed(1))
    tr = capture(tiny_handle.model, ids, attentions=True)
    seq = ids.shape[1]
    for layer in range(tiny_handle.info.n_layers):
        pairs = computed_pairs(tiny_handle.model, layer, seq)
        if layer_type(tiny_handle.model, layer) == "sliding_attention":
            assert pairs.sum() < torch.ones(seq, seq).tril().sum()
        logits = layer_logits(tiny_handle.model, layer, tr.residual[layer])
        probs = logits.masked_fill(~pairs, float("-inf")).softmax(-1)
        assert torch.allclose(probs, tr.attentions[layer], atol=1e-5)


def test_observed_scores_on_sample_texts_stay_below_bounds(tiny_handle, fresh_store):
    computed = bounds(tiny_handle, BoundsConfig(n_texts=2, max_tokens=32))
    result = computed.value
    assert not computed.cached and result.n_tokens > 0
    assert np.isfinite(result.observed).all() and (result.observed > 0).all()
    assert (result.observed <= result.bound).all() and not result.summary()["bound_ever_exceeded"]
    assert ((result.utilisation > 0) & (result.utilisation <= 1)).all()
    assert len(result.table()) == tiny_handle.info.n_layers
    again = bounds(tiny_handle, BoundsConfig(n_texts=2, max_tokens=32))
    assert again.cached and np.array_equal(again.value.bound, result.bound)


def test_calibration_scales_and_weights_only_mode(fresh_store):
    handle = load("tiny-llama")
    base = bounds(handle, WEIGHTS_ONLY).value
    wider = bounds(handle, BoundsConfig(n_texts=0, calibration=2.0, fp8_format="e5m2")).value
    assert np.allclose(wider.scale, 57344.0 / (2.0 * base.layer_bound), rtol=1e-6)
    assert np.isnan(base.observed).all() and base.table()[0]["utilisation"] is None
    exact = bounds(handle, BoundsConfig(n_texts=0, method="exact")).value
    assert np.allclose(exact.sigma, base.sigma, rtol=1e-4)


@pytest.mark.parametrize(("changes", "message"), [
    (dict(method="svd"), "method must be one of power, exact, dense, got 'svd'"),
    (dict(calibration=0.0), "calibration must be in (0, inf), got 0.0"),
    (dict(calibration=float("nan")), "calibration must be a number"),
    (dict(calibration=float("inf")), "calibration must be in (0, inf), got inf"),
    (dict(fp8_format="e3m4"), "fp8_format must be one of e4m3, e5m2"),
    (dict(n_texts=-1), "n_texts must be in [0, 8], got -1"),
    (dict(n_texts=99), "n_texts must be in [0, 8], got 99"),
    (dict(max_iter=0), "max_iter must be in [1, inf)"),
])
def test_bad_configs_raise_user_errors_on_construction(changes, message):
    with pytest.raises(UserError, match=re.escape(message)):
        BoundsConfig(**changes)


def test_unsupported_models_and_qk_norms_are_refused():
    with pytest.raises(UserError, match="olmo2"):
        check_supported(SimpleNamespace(config=SimpleNamespace(model_type="olmo2")))
    qk = attention_qk_weights(load("tiny-qwen3").model, 0)
    whole = SimpleNamespace(q_norm=torch.ones(64), k_norm=torch.ones(64))  # over all heads (OLMo2-style)
    with pytest.raises(UserError, match="whole projection"):
        _qk_norm_factors(whole, 4, 2, 16)
    aware, safe = _qk_norm_factors(qk, 4, 2, 16)
    assert (safe >= aware).all()
