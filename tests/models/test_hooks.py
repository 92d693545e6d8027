import pytest
import torch

from backend.models.hooks import HeadEdit, Hooks, OutputAdd, capture
from backend.models.speculative import _PASSIVE_HOOKS


def _ids(handle, text="The cat sat on the mat."):
    return handle.tokenizer(text, return_tensors="pt")["input_ids"]


def test_reading_heads_leaves_logits_bit_identical(tiny_handle):
    ids = _ids(tiny_handle)
    info = tiny_handle.info
    with torch.no_grad():
        plain = tiny_handle.model(input_ids=ids).logits
    traced = capture(tiny_handle.model, ids, heads=range(info.n_layers), mlp_up=range(info.n_layers))
    assert torch.equal(plain, traced.logits)
    for layer in range(info.n_layers):
        assert traced.head_outputs[layer].shape == (1, ids.shape[1], info.n_heads, info.head_dim)
        assert traced.mlp_up[layer].shape == (1, ids.shape[1], info.intermediate_size)
    assert len(traced.residual) == info.n_layers + 1
    assert traced.residual[0].shape == (1, ids.shape[1], info.hidden_size)


def test_attention_probabilities_are_distributions(tiny_handle):
    ids = _ids(tiny_handle)
    implementation = tiny_handle.model.config._attn_implementation
    traced = capture(tiny_handle.model, ids, attentions=True)
    assert tiny_handle.model.config._attn_implementation == implementation  # restored afterwards
    info = tiny_handle.info
    assert len(traced.attentions) == info.n_layers
    probs = traced.attentions[0]
    assert probs.shape == (1, info.n_heads, ids.shape[1], ids.shape[1])
    torch.testing.assert_close(probs.sum(-1), torch.ones_like(probs.sum(-1)))
    assert torch.all(probs.triu(diagonal=1) == 0)  # causal


def _own_hooks(model) -> int:
    """Forward hooks on `model`, leaving out transformers' output recorders: it installs them the first time a forward
    of the model asks for attentions, which depends on what ran before in this process."""
    return sum(getattr(hook, "__name__", "") not in _PASSIVE_HOOKS
               for m in model.modules() for hook in m._forward_hooks.values())


def test_pattern_layers_keep_only_the_asked_layer(tiny_handle):
    """Reading one layer's pattern keeps that layer's probabilities alone (not every layer's, as
    `output_attentions` does) and they equal the model's own."""
    ids, model = _ids(tiny_handle), tiny_handle.model
    installed = _own_hooks(model)
    asked = []
    handle = model.register_forward_pre_hook(lambda module, args, kwargs: asked.append(kwargs.get("output_attentions")),
                                             with_kwargs=True)
    try:
        traced = capture(model, ids, pattern_layers=(1,))
    finally:
        handle.remove()
    assert _own_hooks(model) == installed  # ours removed
    assert asked == [False] and traced.attentions is None and set(traced.patterns) == {1}
    torch.testing.assert_close(traced.patterns[1], capture(model, ids, attentions=True).attentions[1])


def test_zeroing_all_heads_equals_zero_o_proj_input(tiny_handle):
    """Zeroing every head of a layer must equal a model whose o_proj sees zeros: check via replace-with-zeros."""
    ids = _ids(tiny_handle)
    info = tiny_handle.info
    all_heads = tuple(range(info.n_heads))
    zeroed = capture(tiny_handle.model, ids, heads=[0], head_edits=[HeadEdit(0, all_heads, "zero")])
    replaced = capture(tiny_handle.model, ids, head_edits=[
        HeadEdit(0, all_heads, "replace", torch.zeros(info.n_heads, info.head_dim))])
    assert torch.count_nonzero(zeroed.head_outputs[0]) == 0
    assert torch.equal(zeroed.logits, replaced.logits)
    plain = capture(tiny_handle.model, ids)
    assert not torch.allclose(zeroed.logits, plain.logits)


def test_replace_one_head_at_last_position_changes_only_last_position(tiny_handle):
    ids = _ids(tiny_handle)
    info = tiny_handle.info
    value = torch.randn(1, info.head_dim)
    plain = capture(tiny_handle.model, ids)
    edited = capture(tiny_handle.model, ids, heads=[1],
                     head_edits=[HeadEdit(1, (2,), "replace", value, position=-1)])
    assert torch.equal(plain.logits[:, :-1], edited.logits[:, :-1])
    assert not torch.allclose(plain.logits[:, -1], edited.logits[:, -1])
    torch.testing.assert_close(edited.head_outputs[1][0, -1, 2], value[0])


def test_add_to_heads_is_linear_in_o_proj(tiny_handle):
    """Adding delta to head h before o_proj equals adding o_proj's weight slice times delta after it."""
    ids = _ids(tiny_handle)
    info = tiny_handle.info
    delta = torch.randn(1, info.head_dim)
    from backend.models.architecture import attention_out_proj

    proj = attention_out_proj(tiny_handle.model, 0)
    weight = proj.weight if info.family != "gpt2" else proj.weight.T  # GPT-2's Conv1D stores (in, out)
    h = 1
    vector = weight[:, h * info.head_dim:(h + 1) * info.head_dim] @ delta[0]
    via_heads = capture(tiny_handle.model, ids, head_edits=[HeadEdit(0, (h,), "add", delta)])
    with torch.no_grad(), Hooks(tiny_handle.model, output_adds=[OutputAdd(0, vector, position=None)]):
        via_output = tiny_handle.model(input_ids=ids).logits
    torch.testing.assert_close(via_heads.logits, via_output, atol=1e-5, rtol=1e-5)


def test_hooks_are_removed_after_use(tiny_handle):
    ids = _ids(tiny_handle)
    with torch.no_grad():
        before = tiny_handle.model(input_ids=ids).logits
    capture(tiny_handle.model, ids, head_edits=[HeadEdit(0, (0, 1), "zero")])
    with torch.no_grad():
        after = tiny_handle.model(input_ids=ids).logits
    assert torch.equal(before, after)


def test_a_hooked_computation_in_one_thread_does_not_leak_into_another(tiny_handle):
    """Hooks hold the model's lock, so a concurrent decoding step sees the unhooked model."""
    import threading

    from backend.models.incremental import IncrementalDecoder

    ids = _ids(tiny_handle)
    with torch.no_grad():
        expected = tiny_handle.model(input_ids=ids).logits[:, -1].float()
    inside, seen = threading.Event(), {}

    def plain_decode():
        inside.wait()
        seen["logits"] = IncrementalDecoder(tiny_handle.model).prefill(ids)

    worker = threading.Thread(target=plain_decode)
    worker.start()
    with Hooks(tiny_handle.model, head_edits=[HeadEdit(0, (0, 1, 2, 3), "zero")]):
        inside.set()
        worker.join(timeout=0.5)  # blocked on the lock while the ablation is installed
        assert worker.is_alive()
    worker.join()
    torch.testing.assert_close(seen["logits"], expected)


def _lock_is_free_for_another_thread(model) -> bool:
    import threading

    from backend.models.locks import model_lock

    got = {}

    def probe():
        lock = model_lock(model)
        got["ok"] = lock.acquire(timeout=2)
        if got["ok"]:
            lock.release()

    worker = threading.Thread(target=probe)
    worker.start()
    worker.join()
    return got["ok"]


def test_an_error_while_installing_hooks_releases_the_lock_and_removes_installed_hooks(tiny_handle):
    """The edit on layer 0 installs, the read on a layer that does not exist raises: nothing may stay behind."""
    model, ids = tiny_handle.model, _ids(tiny_handle)
    with torch.no_grad():
        before = model(input_ids=ids).logits
    with pytest.raises(IndexError):
        with Hooks(model, head_edits=[HeadEdit(0, (0, 1), "zero")], read_mlp_up=[10_000]):
            pass
    assert _lock_is_free_for_another_thread(model)
    with torch.no_grad():
        assert torch.equal(model(input_ids=ids).logits, before)


def test_an_error_inside_the_block_also_cleans_up(tiny_handle):
    model, ids = tiny_handle.model, _ids(tiny_handle)
    with torch.no_grad():
        before = model(input_ids=ids).logits
    with pytest.raises(RuntimeError, match="boom"):
        with Hooks(model, head_edits=[HeadEdit(0, (0, 1), "zero")]):
            raise RuntimeError("boom")
    assert _lock_is_free_for_another_thread(model)
    with torch.no_grad():
        assert torch.equal(model(input_ids=ids).logits, before)
