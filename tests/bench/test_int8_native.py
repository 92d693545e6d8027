"""bench/int8_native.py: the trial int8 kernel (bench-only; the app's int8 copy keeps PyTorch's op). Where it cannot be
built (no AVX-512, no C++ compiler or no ninja, as in a clean install) its tests skip."""
import pytest
import torch
from torch import nn

from backend.models import reduced
from backend.models.reduced import Int8Linear
from bench import int8_native
from bench.int8_native import NativeInt8Linear, native_int8_copy
from tests.support.trial_kernel import trial_kernel_allowed


def _rounded(out_features, in_features, seed=0):
    torch.manual_seed(seed)
    weight = torch.randn(out_features, in_features) * 0.02
    scale = weight.abs().amax(dim=1) / 127
    return torch.round(weight / scale[:, None]).to(torch.int8), scale


@pytest.fixture(scope="module")
def native():
    if not trial_kernel_allowed():
        pytest.skip("the trial int8 kernel is not built on this machine (a bench run builds it, or "
                    "DASH_BUILD_TRIAL_KERNEL=1 lets the tests build it)")
    kernel = int8_native.kernel()
    if kernel is None:
        pytest.skip("the trial int8 kernel cannot be built here (it needs AVX-512, a C++ compiler and ninja)")
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


def test_the_native_linear_agrees_with_the_apps_int8_linear(native):
    """The native path multiplies fp32 activations; PyTorch's op rounds them to bf16 first: the two agree to
    bf16's precision, and the native one is the closer to the dequantized fp32 product."""
    torch.manual_seed(0)
    linear = nn.Linear(576, 192, bias=True)
    x = torch.randn(2, 3, 576)
    fast, app = NativeInt8Linear(linear.weight, linear.bias), Int8Linear(linear.weight, linear.bias)
    assert fast.scale.dtype == torch.float32 and app.scale.dtype == torch.bfloat16
    assert torch.equal(fast.weight_int8, app.weight_int8)
    exact = nn.functional.linear(x, fast.weight_int8.float() * fast.scale[:, None], linear.bias)
    with torch.no_grad():
        ours, theirs = fast(x), app(x)
    assert ours.shape == theirs.shape == exact.shape and ours.dtype == theirs.dtype == torch.float32
    torch.testing.assert_close(ours, theirs, rtol=0.02, atol=0.02 * exact.abs().max().item())
    assert (ours - exact).abs().max() < 1e-5 < (theirs - exact).abs().max()


def test_a_native_copy_computes_what_the_apps_copy_does_and_leaves_it_on_pytorchs_op(native, tiny_handle):
    model = tiny_handle.model
    copy = native_int8_copy(model, round_head=True)
    linears = [m for m in copy.modules() if isinstance(m, Int8Linear)]
    assert linears and all(isinstance(m, NativeInt8Linear) for m in linears)
    assert reduced._LINEAR["int8"] is Int8Linear
    app = reduced.reduced_copy(model, "int8", round_head=True)
    assert app is not copy and not any(isinstance(m, NativeInt8Linear) for m in app.modules())
    ids = tiny_handle.tokenizer("Once upon a time", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        ours, theirs = copy(ids).logits, app(ids).logits
    torch.testing.assert_close(ours, theirs, rtol=0.05, atol=0.05 * theirs.abs().max().item())


def test_a_cpu_without_avx512_gets_no_native_kernel(monkeypatch):
    int8_native.kernel.cache_clear()
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
    try:
        assert int8_native.kernel() is None
    finally:
        int8_native.kernel.cache_clear()


def test_a_machine_without_ninja_or_a_compiler_gets_no_native_kernel(monkeypatch):
    from torch.utils import cpp_extension

    def no_ninja(*args, **kwargs):
        raise RuntimeError("Ninja is required to load C++ extensions")

    int8_native.kernel.cache_clear()
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    monkeypatch.setattr(cpp_extension, "load", no_ninja)
    try:
        assert int8_native.kernel() is None
        with pytest.raises(RuntimeError, match="no trial int8 kernel"):
            native_int8_copy(nn.Sequential(nn.Linear(4, 4)), round_head=False)
    finally:
        int8_native.kernel.cache_clear()


def test_only_a_build_from_this_checkouts_source_counts_as_built(tmp_path, monkeypatch):
    """A build from another checkout would be rebuilt on load (its recipe names another source path): the tests skip
    there rather than spend the build inside `make test`."""
    from torch.utils import cpp_extension

    monkeypatch.setattr(cpp_extension, "_get_build_directory", lambda name, verbose: str(tmp_path))
    assert not int8_native.built()
    (tmp_path / f"{int8_native.NAME}.so").write_bytes(b"")
    (tmp_path / "build.ninja").write_text("build int8_linear.o: compile /elsewhere/bench/int8_linear.cpp\n")
    assert not int8_native.built()
    (tmp_path / "build.ninja").write_text(f"build int8_linear.o: compile {int8_native.SOURCE}\n")
    assert int8_native.built()
