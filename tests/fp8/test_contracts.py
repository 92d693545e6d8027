"""The contracts of FP8's two registries, run on every registered variant (a new one is tested by registering it).

- sigma methods (`SIGMA_METHODS`): sigma `[..., kv, group]` of random grouped factors agrees with the exact
  SVD of the formed matrix (float64), keys shared per group;
- formats (`FORMATS`): the round trip keeps the range's ends exactly, clamps beyond them (finite, never NaN/inf),
  and rounds values in the normal range with at most the relative error a 2-bit mantissa allows.
"""
import numpy as np
import pytest
import torch

from backend.fp8.formats import FORMATS
from backend.fp8.spectral import SIGMA_METHODS, PowerSettings, interaction_sigma

SHAPES = [(1, 1, 8, 32), (2, 3, 16, 48)]  # (kv, group, r, d)


def _formed_sigma(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """Reference: each head's d x d matrix with its group's key factor, largest singular value in float64."""
    a64, b64 = a.double().numpy(), b.double().numpy()
    out = np.zeros(a.shape[:-2])
    for idx in np.ndindex(*a.shape[:-2]):
        out[idx] = np.linalg.norm(a64[idx].T @ b64[idx[:-1]], 2)
    return out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", SIGMA_METHODS.names())
def test_every_sigma_method_agrees_with_the_exact_svd(name, shape):
    gen = torch.Generator().manual_seed(sum(shape))
    kv, group, r, d = shape
    a, b = torch.randn(2, kv, group, r, d, generator=gen), torch.randn(2, kv, r, d, generator=gen)
    out = interaction_sigma(a, b, name, PowerSettings(max_iter=5000))
    assert out.sigma.shape == (2, kv, group) and out.sigma.dtype == torch.float32
    assert isinstance(out.iterations, int) and out.iterations >= 0
    np.testing.assert_allclose(out.sigma.numpy(), _formed_sigma(a, b), rtol=1e-4)


@pytest.mark.parametrize("name", FORMATS.names())
def test_every_format_round_trips_within_its_range_and_clamps_beyond(name):
    fmt = FORMATS.get(name)
    ends = torch.tensor([fmt.max_value, -fmt.max_value, fmt.min_normal, 0.0])
    assert torch.equal(fmt.run(ends), ends)
    beyond = fmt.run(torch.tensor([2 * fmt.max_value, -1e30, float("inf")]))
    assert torch.equal(beyond, torch.tensor([fmt.max_value, -fmt.max_value, fmt.max_value]))
    normal = torch.logspace(np.log10(fmt.min_normal), np.log10(fmt.max_value), 997)
    rel = ((fmt.run(normal) - normal).abs() / normal).max()
    assert 0 < rel <= 2.0 ** -3  # round to nearest with >= 2 mantissa bits; 0 would mean no cast happened
