"""Steering adds exactly the vector; ablation zeroes the intended heads only; selection by percentage."""
import numpy as np
import pytest
import torch

from backend.errors import UserError
from backend.models.architecture import attention_out_proj
from backend.models import kernel
from backend.models.hooks import Hooks, OutputAdd, capture
from backend.mt.selection import head_count, random_heads, top_heads
from backend.mt.steering import NONE, Intervention, generate_line, steering_vectors

IDS = torch.tensor([list(range(70, 95))])


def _attention_outputs(model, layer, output_adds=()):
    seen = []
    with Hooks(model, output_adds=output_adds):  # the reader is registered after the steering hook: runs last
        handle = attention_out_proj(model, layer).register_forward_hook(lambda m, a, out: seen.append(out.detach()))
        try:
            model(input_ids=IDS)
        finally:
            handle.remove()
    return seen[0]


def test_steering_vector_is_o_proj_of_the_selected_mean_heads(tiny_handle):
    model, info = tiny_handle.model, tiny_handle.info
    mean = np.random.default_rng(0).normal(size=(info.n_layers, info.n_heads, info.head_dim)).astype(np.float32)
    heads = ((0, 1), (0, 3), (1, 2))
    vectors = steering_vectors(model, mean, heads)
    assert set(vectors) == {0, 1}
    proj = attention_out_proj(model, 0)
    z = torch.zeros(info.n_heads, info.head_dim)
    z[1], z[3] = torch.from_numpy(mean[0, 1]), torch.from_numpy(mean[0, 3])
    with torch.no_grad():
        expected = proj(z.reshape(1, -1))[0] - proj(torch.zeros(1, info.n_heads * info.head_dim))[0]
    torch.testing.assert_close(vectors[0], expected)
    assert vectors[1].shape == (info.hidden_size,)


def test_steering_hook_adds_exactly_the_vector_at_the_last_position(tiny_handle):
    model, info = tiny_handle.model, tiny_handle.info
    vector = torch.randn(info.hidden_size)
    plain = _attention_outputs(model, 1)
    steered = _attention_outputs(model, 1, [OutputAdd(1, vector, position=-1, scale=3.0)])
    torch.testing.assert_close(steered[:, :-1], plain[:, :-1], rtol=0, atol=0)
    torch.testing.assert_close(steered[0, -1] - plain[0, -1], 3.0 * vector, rtol=1e-5, atol=1e-5)


def _recorded_generation(monkeypatch, handle, prompt, intervention):
    """generate_line() with its decoder recorded: (text, every token fed, logits after the prefill and each step)."""
    seen = {}

    class Recording(kernel.IncrementalDecoder):
        def __init__(self, model, **kwargs):
            super().__init__(model, **kwargs)
            seen["decoder"], seen["logits"] = self, []

        def prefill(self, *args, **kwargs):
            seen["logits"].append(super().prefill(*args, **kwargs)[0].clone())
            return seen["logits"][-1][None]

        def step(self, *args, **kwargs):
            seen["logits"].append(super().step(*args, **kwargs)[0].clone())
            return seen["logits"][-1][None]

    monkeypatch.setattr(kernel, "IncrementalDecoder", Recording)  # the one decoder every feature's loop runs on
    text = generate_line(handle.model, handle.tokenizer, prompt, 8, intervention, max_leading_blank=99)
    return text, seen["decoder"].tokens[0].tolist(), torch.stack(seen["logits"])


def _full_forward_logits(model, tokens, adds):
    with torch.no_grad(), Hooks(model, output_adds=adds):
        return model(input_ids=torch.tensor([tokens])).logits[0].float()


def test_steering_reaches_every_decoding_step(tiny_handle, monkeypatch):
    # Reference: one full forward over prompt + generated tokens with the vector added at the last prompt position
    # and at every generated position (what steering each step means). Steering the prompt only would give the
    # `prompt_only` logits instead, so the steered steps must match the first and differ from the second.
    model, info = tiny_handle.model, tiny_handle.info
    vector = torch.randn(info.hidden_size, generator=torch.Generator().manual_seed(0)) * 5
    prompt = list(range(70, 80))
    steer = Intervention(({0: vector},), strength=4.0)
    text, tokens, logits = _recorded_generation(monkeypatch, tiny_handle, prompt, steer)
    plain_text, plain_tokens, plain_logits = _recorded_generation(monkeypatch, tiny_handle, prompt, NONE)
    assert generate_line(model, tiny_handle.tokenizer, prompt, 8, steer, max_leading_blank=99) == text  # deterministic
    steps = len(tokens) - len(prompt)
    assert steps >= 3, "too few decoding steps to test"
    first = len(prompt) - 1  # the position whose logits the prefill returns
    every = [OutputAdd(0, vector, position=p, scale=4.0) for p in range(first, len(tokens))]
    expected = _full_forward_logits(model, tokens, every)[first:]
    prompt_only = _full_forward_logits(model, tokens, [OutputAdd(0, vector, position=first, scale=4.0)])[first:]
    unsteered = _full_forward_logits(model, tokens, [])[first:]
    torch.testing.assert_close(logits, expected, rtol=1e-3, atol=1e-3)
    for k in range(1, steps + 1):  # every decoding step after the prefill
        assert (logits[k] - prompt_only[k]).abs().max() > 0.05, f"step {k} was not steered"
        assert (logits[k] - unsteered[k]).abs().max() > 0.05, f"step {k} equals the unsteered run"
    # and unsteered generation is what the unsteered reference predicts, while the steered one is not
    torch.testing.assert_close(plain_logits, _full_forward_logits(model, plain_tokens, [])[first:], rtol=1e-3,
                               atol=1e-3)
    assert (text, tokens) != (plain_text, plain_tokens)


def test_ablation_zeroes_the_intended_heads_only(tiny_handle):
    model, info = tiny_handle.model, tiny_handle.info
    layers = range(info.n_layers)
    plain = capture(model, IDS, heads=layers).head_outputs
    edits = Intervention(ablate=((0, 1), (0, 2), (1, 0))).head_edits()
    assert [(e.layer, e.heads, e.mode) for e in edits] == [(0, (1, 2), "zero"), (1, (0,), "zero")]
    ablated = capture(model, IDS, heads=layers, head_edits=edits).head_outputs
    assert torch.count_nonzero(ablated[0][:, :, [1, 2]]) == 0
    torch.testing.assert_close(ablated[0][:, :, [0, 3]], plain[0][:, :, [0, 3]], rtol=0, atol=0)  # same layer: untouched
    assert torch.count_nonzero(ablated[1][:, :, 0]) == 0
    assert torch.count_nonzero(ablated[1][:, :, 1:]) > 0


def test_head_selection_by_percentage():
    assert head_count(30, 9, 1.0) == 3 and head_count(30, 9, 5.0) == 14 and head_count(30, 9, 0) == 0
    assert head_count(2, 4, 1.0) == 1  # at least one head for any positive percentage
    with pytest.raises(UserError):
        head_count(30, 9, 7.0)
    scores = np.array([[0.1, 0.9, 0.2], [0.5, -1.0, 0.9]])
    assert top_heads(scores, 5.0) == ((0, 1),)
    assert top_heads(np.tile(scores, (50, 1)), 1.0)[:2] == ((0, 1), (1, 2))


def test_random_heads_are_seeded_and_exclude_the_selected():
    selected = ((0, 0), (1, 1))
    a = random_heads(30, 9, 3, seed=1, exclude=selected)
    assert a == random_heads(30, 9, 3, seed=1, exclude=selected) and len(set(a)) == 3
    assert not set(a) & set(selected)
    assert random_heads(30, 9, 3, seed=2, exclude=selected) != a
    with pytest.raises(UserError):
        random_heads(2, 2, 4, seed=0, exclude=selected)


def test_patch_steering_replaces_the_heads_at_the_last_position_only(tiny_handle):
    from backend.mt.steering import head_patches

    model, info = tiny_handle.model, tiny_handle.info
    mean = np.full((info.n_layers, info.n_heads, info.head_dim), 0.25, dtype=np.float32)
    edits = Intervention(patches=head_patches(mean, ((0, 2),))).head_edits()
    layers = range(info.n_layers)
    plain = capture(model, IDS, heads=layers).head_outputs[0]
    patched = capture(model, IDS, heads=layers, head_edits=edits).head_outputs[0]
    assert torch.all(patched[0, -1, 2] == 0.25)
    torch.testing.assert_close(patched[:, :-1], plain[:, :-1], rtol=0, atol=0)
    torch.testing.assert_close(patched[0, -1, [0, 1, 3]], plain[0, -1, [0, 1, 3]], rtol=0, atol=0)
