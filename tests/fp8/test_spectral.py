"""sigma of W_Q,h W_K,g^T: power iteration and the exact QR check against the formed matrix."""
import numpy as np
import pytest
import torch

from backend.errors import UserError
from backend.fp8.geometry import model_factors
from backend.fp8.spectral import PowerSettings, factor_norm, interaction_sigma
from backend.models import load

SHAPES = [(1, 1, 8, 32), (2, 2, 16, 64), (3, 4, 16, 48), (2, 3, 32, 96)]  # (kv, group, r, d)


def _random_factors(kv, group, r, d, seed, layers=2):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(layers, kv, group, r, d, generator=gen), torch.randn(layers, kv, r, d, generator=gen))


def _formed_sigma(a, b):
    """Reference: expand keys per head explicitly, form the d x d matrix, full SVD in float64."""
    a64, b64 = a.double().numpy(), b.double().numpy()
    out = np.zeros(a.shape[:-2])
    for idx in np.ndindex(*a.shape[:-2]):
        key = b64[idx[:-1]]  # the group's key factor, shared by every head of the group
        out[idx] = np.linalg.norm(a64[idx].T @ key, 2)
    return out


@pytest.mark.parametrize(("shape", "block"), [(s, 8) for s in SHAPES] + [(s, 1) for s in SHAPES[:2]])
def test_power_iteration_matches_exact_on_random_factors(shape, block):
    a, b = _random_factors(*shape, seed=sum(shape) + block)
    power = interaction_sigma(a, b, "power", PowerSettings(max_iter=5000, block=block)).sigma
    exact = interaction_sigma(a, b, "exact").sigma
    reference = _formed_sigma(a, b)
    assert np.allclose(exact.numpy(), reference, rtol=1e-5)
    assert np.abs(power.numpy() / reference - 1).max() < 1e-4


def test_dense_method_and_factor_norms_agree_with_numpy():
    a, b = _random_factors(2, 2, 8, 24, seed=3)
    assert np.allclose(interaction_sigma(a, b, "dense").sigma.numpy(), _formed_sigma(a, b), rtol=1e-5)
    expected = np.linalg.norm(a.double().numpy(), 2, axis=(-2, -1))
    assert np.allclose(factor_norm(a).numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("model_id", ["tiny-llama", "tiny-qwen3"])
def test_power_iteration_matches_exact_on_tiny_gqa_models(model_id):
    handle = load(model_id)
    assert handle.info.group_size == 2  # 4 query heads share 2 key heads
    factors = model_factors(handle.model)
    a, b = torch.stack([f.a for f in factors]), torch.stack([f.b for f in factors])
    power = interaction_sigma(a, b, "power").sigma
    assert power.shape == (handle.info.n_layers, handle.info.n_kv_heads, handle.info.group_size)
    assert np.abs(power.numpy() / _formed_sigma(a, b) - 1).max() < 1e-4


def test_bad_inputs_raise_user_errors():
    a, b = _random_factors(2, 2, 8, 16, seed=0)
    with pytest.raises(UserError, match="Unknown sigma method"):
        interaction_sigma(a, b, "lanczos")
    with pytest.raises(UserError, match="shapes"):
        interaction_sigma(a, b[..., :-1], "power")
    with pytest.raises(UserError, match="shapes"):
        interaction_sigma(a, b[:, :1], "exact")
    with pytest.raises(UserError, match="max_iter"):
        interaction_sigma(a, b, "power", PowerSettings(max_iter=0))
