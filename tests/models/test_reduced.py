import pytest
import torch
from torch import nn

from backend.models import kernel
from backend.models.reduced import Bf16Linear, Int8Linear, _linear_parts, reduced_copy


def _prompt(handle):
    return handle.tokenizer("Once upon a time", return_tensors="pt")["input_ids"]


@pytest.mark.parametrize("kind", [Int8Linear, Bf16Linear])
def test_rounded_linear_stays_close_to_the_reference(kind):
    torch.manual_seed(0)
    linear = nn.Linear(64, 96, bias=True)
    x = torch.randn(3, 5, 64)
    reference, rounded = linear(x), kind(linear.weight, linear.bias)(x)
    assert rounded.shape == reference.shape and rounded.dtype == reference.dtype
    relative = (rounded - reference).norm() / reference.norm()
    assert 0 < relative < 0.02  # rounded (so not the same numbers), but within a couple of percent


def test_copy_shares_what_it_does_not_round_and_drops_hooks(tiny_handle):
    model = tiny_handle.model
    handle = model.get_input_embeddings().register_forward_hook(lambda *a: None)
    try:
        copy = reduced_copy(model, "int8")
    finally:
        handle.remove()
    assert copy is reduced_copy(model, "int8") and reduced_copy(model, "reference") is model
    assert copy.get_input_embeddings().weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    head = copy.get_output_embeddings()  # the head keeps the reference precision and weight (maybe packed too)
    assert not isinstance(head, Int8Linear)
    assert head.weight.data_ptr() == model.get_output_embeddings().weight.data_ptr()
    assert not any(_linear_parts(m) for m in copy.get_decoder().modules())  # nn.Linear, or GPT-2's Conv1D
    assert not any(m._forward_hooks for m in copy.modules())
    assert not any(isinstance(m, Int8Linear) for m in model.modules())  # the reference is untouched
    head_rounded = reduced_copy(model, "int8", round_head=True)
    assert isinstance(head_rounded.get_output_embeddings(), Int8Linear)


@pytest.mark.parametrize("precision", ["int8", "bf16"])
def test_kernel_decodes_on_the_copy_under_the_reference_lock(tiny_handle, precision):
    from backend.models.locks import model_lock

    model = tiny_handle.model
    seen = []
    copy = reduced_copy(model, precision)
    hook = copy.get_decoder().register_forward_pre_hook(lambda *a: seen.append(model_lock(model).held))
    try:
        decoder = kernel.start(model, _prompt(tiny_handle), 1, 6, precision=precision)
        out = kernel.decode(decoder, kernel.greedy_policy, 6, stop_at_eos=False)
    finally:
        hook.remove()
    assert out.tokens.shape == (1, 6) and seen and all(seen)
    with torch.no_grad():
        full = model(input_ids=_prompt(tiny_handle)).logits[0, -1]
        rounded = copy(input_ids=_prompt(tiny_handle)).logits[0, -1]
    assert not torch.equal(full, rounded)
    assert (full - rounded).abs().max() < 0.05 * full.abs().max()


def test_the_packed_head_computes_the_head():
    from backend.models.reduced import PackedLinear

    torch.manual_seed(0)
    linear = nn.Linear(64, 300, bias=False)
    if not PackedLinear.available(linear.weight):
        pytest.skip("no MKL in this torch build")
    packed = PackedLinear(linear.weight, None, rows=1)
    for shape in [(1, 64), (1, 1, 64), (3, 64)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(packed(x), linear(x), atol=1e-4, rtol=1e-4)


def _mkl_or_skip():
    if not torch._C.has_mkl:
        pytest.skip("no MKL in this torch build")


def test_a_packed_linear_packs_its_own_row_count_and_leaves_the_rest_to_the_reference():
    from backend.models.reduced import PackedLinear

    _mkl_or_skip()
    torch.manual_seed(0)
    linear = nn.Linear(64, 300, bias=True)
    packed = PackedLinear(linear.weight, linear.bias, rows=4)
    for shape in [(4, 64), (4, 1, 64), (2, 2, 64)]:  # 4 rows however the batch is shaped
        x = torch.randn(*shape)
        torch.testing.assert_close(packed(x), linear(x), atol=1e-5, rtol=1e-5)
    for shape in [(1, 64), (3, 64), (4, 5, 64)]:  # other row counts: the reference product itself
        x = torch.randn(*shape)
        assert torch.equal(packed(x), linear(x))
    assert packed.weight is linear.weight


def test_a_packed_copy_is_kept_per_model_for_one_row_count(tiny_handle):
    from backend.models.reduced import PackedLinear

    _mkl_or_skip()
    model = tiny_handle.model
    assert reduced_copy(model, "packed", rows=1) is model  # one row: nothing to gain
    four = reduced_copy(model, "packed", rows=4)
    assert four is not model and four is reduced_copy(model, "packed", rows=4)
    packed = [m for m in four.modules() if isinstance(m, PackedLinear)]
    assert packed and all(m.rows == 4 for m in packed)
    assert not any(_linear_parts(m) for m in four.modules())  # every linear layer, the head included
    assert four.get_input_embeddings().weight.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    assert not any(isinstance(m, PackedLinear) for m in model.modules())
    eight = reduced_copy(model, "packed", rows=8)
    assert all(m.rows == 8 for m in eight.modules() if isinstance(m, PackedLinear))
    assert reduced_copy(model, "packed", rows=8) is eight  # the 4-row packing was let go


def test_decoding_on_packed_weights_keeps_the_reference_distribution(tiny_handle):
    """Rows decoded on the packed copy see the reference model's logits up to the order of the sums: the same
    distribution (a seed's draws agree unless two tokens are within that rounding)."""
    _mkl_or_skip()
    model, prompt = tiny_handle.model, _prompt(tiny_handle)
    runs = {}
    for precision in ("reference", "packed"):
        decoder = kernel.start(model, prompt, 4, 6, precision=precision)
        assert (decoder.model is model) == (precision == "reference")
        seen = []

        def policy(step, scores, seen=seen):
            seen.append(scores.clone())
            return kernel.greedy_policy(step, scores)
        kernel.decode(decoder, policy, 6, stop_at_eos=False)
        runs[precision] = seen
    for reference, packed in zip(runs["reference"], runs["packed"], strict=True):
        torch.testing.assert_close(packed, reference, atol=1e-4, rtol=1e-4)
