import pytest
import torch
from torch import nn

from backend.models import int8_native
from backend.models.reduced import Int8Linear


def _rounded(out_features, in_features, seed=0):
    torch.manual_seed(seed)
    weight = torch.randn(out_features, in_features) * 0.02
    scale = weight.abs().amax(dim=1) / 127
    return torch.round(weight / scale[:, None]).to(torch.int8), scale


@pytest.fixture(scope="module")
def native():
    kernel = int8_native.kernel()
    if kernel is None:
        pytest.skip("no AVX-512 or no compiler here: the int8 copy uses PyTorch's op")
    return kernel


# tails on every axis: K not a multiple of 16, N not a multiple of the 8-row tile, M past a 4-row block
@pytest.mark.parametrize("out_features,in_features", [(96, 64), (13, 40), (5, 576), (200, 1536)])
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 9])
def test_native_kernel_is_the_dequantized_product(native, out_features, in_features, rows):
    q, scale = _rounded(out_features, in_features)
    x = torch.randn(rows, in_features)
    expected = x @ (q.float() * scale[:, None]).T
    torch.testing.assert_close(native(x, q, scale), expected, rtol=1e-5, atol=1e-5)


def test_native_kernel_follows_the_thread_count(native):
    q, scale = _rounded(1000, 576)
    x = torch.randn(2, 576)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = native(x, q, scale)
        torch.set_num_threads(2)
        two = native(x, q, scale)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one, two)  # each output is one thread's sum, in the same order


def test_int8_linear_on_the_native_kernel_agrees_with_pytorchs_op(native, monkeypatch):
    """The native path multiplies fp32 activations; PyTorch's op rounds them to bf16 first: the two agree to
    bf16's precision, and the native one is the closer to the dequantized fp32 product."""
    torch.manual_seed(0)
    linear = nn.Linear(576, 192, bias=True)
    x = torch.randn(2, 3, 576)
    fast = Int8Linear(linear.weight, linear.bias)
    assert fast.native and fast.scale.dtype == torch.float32
    with torch.no_grad():
        ours = fast(x)
    monkeypatch.setattr(int8_native, "kernel", lambda: None)
    fallback = Int8Linear(linear.weight, linear.bias)
    assert not fallback.native and fallback.scale.dtype == torch.bfloat16
    assert torch.equal(fast.weight_int8, fallback.weight_int8)
    exact = nn.functional.linear(x, fast.weight_int8.float() * fast.scale[:, None], linear.bias)
    with torch.no_grad():
        theirs = fallback(x)
    assert ours.shape == theirs.shape == exact.shape and ours.dtype == theirs.dtype == torch.float32
    torch.testing.assert_close(ours, theirs, rtol=0.02, atol=0.02 * exact.abs().max().item())
    assert (ours - exact).abs().max() < 1e-5 < (theirs - exact).abs().max()


def test_a_cpu_without_avx512_gets_no_native_kernel(monkeypatch):
    int8_native.kernel.cache_clear()
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
    try:
        assert int8_native.kernel() is None
    finally:
        int8_native.kernel.cache_clear()
