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
    from backend.models.reduced import PackedHead

    torch.manual_seed(0)
    linear = nn.Linear(64, 300, bias=False)
    if not PackedHead.available(linear.weight):
        pytest.skip("no MKL in this torch build")
    packed = PackedHead(linear.weight, None)
    for shape in [(1, 64), (1, 1, 64), (3, 64)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(packed(x), linear(x), atol=1e-4, rtol=1e-4)
