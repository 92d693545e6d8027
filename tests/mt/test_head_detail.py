"""The head drill-down (`mt head`): its vocabulary projection against a brute-force computation through the
model's own modules, its patching per prompt against the map, its attention row against the model's, errors."""
import dataclasses
import json

import numpy as np
import pytest
import torch

from backend.__main__ import main
from backend.errors import UserError
from backend.models import load
from backend.models.architecture import attention_out_proj, final_norm, post_attention_norm
from backend.models.hooks import capture
from backend.models.readout import capture_final_residual
from backend.mt import HeadsConfig, find_heads
from backend.mt.head_detail import HeadDetailConfig, head_detail, head_write, residual_vocab_effects
from tests.mt.conftest import TINY_TSV

HEADS = HeadsConfig(n_prompts=2, k_shots=2, max_answer_tokens=3)


def _at_scale(norm, piece: torch.Tensor, whole: torch.Tensor) -> torch.Tensor:
    """A norm module's linear part on `piece` with the scale of `whole`, from the module itself: rescale the piece
    to the whole's spread, normalise, take the bias off and undo the rescaling."""
    layer = isinstance(norm, torch.nn.LayerNorm)
    spread = (lambda x: x.std(unbiased=False)) if layer else (lambda x: x.pow(2).mean().sqrt())  # noqa: E731
    c = spread(whole) / spread(piece)
    bias = norm.bias.float() if layer and norm.bias is not None else 0
    return (norm((c * piece)[None])[0].float() - bias) / c


@pytest.mark.parametrize("model_id", ["tiny-llama", "tiny-gpt2", "tiny-qwen3", "tiny-gemma3"])
def test_vocab_projection_equals_brute_force(model_id):
    """The head's write through o_proj (the module, on its input with every other head zeroed, minus the
    bias), the post-norm (Gemma), the final norm with the full final residual's scale and lm_head."""
    handle = load(model_id)
    model, info = handle.model, handle.info
    ids = torch.tensor([list(range(5, 17))])
    layer, head = info.n_layers - 1, info.n_heads - 1
    with capture_final_residual(model) as captured:
        traced = capture(model, ids, heads=[layer])
    z = traced.head_outputs[layer][0, -1]  # [H, dh]
    final = captured[-1][0, -1].float()
    proj = attention_out_proj(model, layer)
    only = torch.zeros_like(z)
    only[head] = z[head]
    piece = (proj(only.reshape(1, -1)) - proj(torch.zeros(1, z.numel())))[0].float()
    post = post_attention_norm(model, layer)
    if post is not None:  # Gemma: the post-norm itself, on the piece rescaled to the whole output's spread
        piece = _at_scale(post, piece, proj(z.reshape(1, -1))[0].float())
    expected = model.get_output_embeddings()(_at_scale(final_norm(model), piece, final)[None].to(model.dtype))[0]
    bias = getattr(model.get_output_embeddings(), "bias", None)
    expected = expected.float() - (0 if bias is None else bias.float())
    raw, reaching = head_write(model, z, head, layer)
    got = residual_vocab_effects(model, reaching, final)
    assert torch.allclose(got, expected, atol=1e-4, rtol=1e-4), float((got - expected).abs().max())
    assert float(raw.norm()) > 0


@pytest.fixture(scope="module")
def handle():
    return load("tiny-llama")


def test_detail_matches_the_map_and_the_model(handle, tiny_data):
    head_map = find_heads(handle, HEADS, tiny_data).value
    layer, head = 1, 2
    out = head_detail(handle, HeadDetailConfig(heads=HEADS, layer=layer, head=head, top_k=5), tiny_data)
    detail = out.value
    # the map's score of the head is the mean of its per-prompt patching effects (batched vs one-by-one patching)
    assert detail.rows == head_map.rows
    assert detail.mean_patching == pytest.approx(float(head_map.patching[layer, head]), abs=1e-4)
    assert len(detail.patching) == len(head_map.rows)
    # the attention row is the model's own, from the answer position, over the prompt
    assert detail.pattern.shape == (len(detail.tokens),)
    assert detail.pattern.sum() == pytest.approx(1.0, abs=1e-5)
    assert len(detail.promoted) == len(detail.suppressed) == 5
    logits = [e.logit for e in detail.promoted]
    assert logits == sorted(logits, reverse=True) and detail.suppressed[0].logit <= detail.promoted[-1].logit
    assert 0.0 <= detail.target_share <= 1.0
    assert {e.language for e in detail.promoted} <= {"target", "source", "both", ""}
    again = head_detail(handle, HeadDetailConfig(heads=HEADS, layer=layer, head=head, top_k=5), tiny_data)
    assert again.cached and again.value.patching == detail.patching


def test_unknown_head_layer_or_prompt_is_a_user_error(handle, tiny_data):
    with pytest.raises(UserError, match="Layer 9 does not exist"):
        head_detail(handle, HeadDetailConfig(heads=HEADS, layer=9), tiny_data)
    with pytest.raises(UserError, match="Head 4 does not exist"):
        head_detail(handle, HeadDetailConfig(heads=HEADS, head=4), tiny_data)
    with pytest.raises(UserError, match="Prompt 5 does not exist"):
        head_detail(handle, HeadDetailConfig(heads=HEADS, example=5), tiny_data)
    with pytest.raises(UserError):
        HeadDetailConfig(layer=-1)


def test_an_example_the_map_lacks_is_refused_before_the_map_is_computed(handle, tiny_data, monkeypatch):
    import backend.mt.head_detail

    def never(*args, **kwargs):
        raise AssertionError("the head map was computed before the example index was checked")

    monkeypatch.setattr(backend.mt.head_detail, "find_heads", never)
    with pytest.raises(UserError, match="Prompt 100000 does not exist"):
        head_detail(handle, HeadDetailConfig(heads=HEADS, example=100_000), tiny_data)


def test_cli_head_json_and_exit_2(tmp_path, capsys):
    data = tmp_path / "tiny.tsv"
    data.write_text(TINY_TSV)
    common = ["mt", "head", "--model", "tiny-llama", "--data", str(data), "--prompts", "2", "--shots", "2"]
    assert main([*common, "--pair", "en-de", "--layer", "0", "--head", "1", "--top-k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pair"] == "en-de" and (out["layer"], out["head"]) == (0, 1)
    assert len(out["promoted"]) == 3 and len(out["patching"]) == 2
    assert np.isclose(sum(out["pattern"]), 1.0, atol=1e-3)
    assert main([*common, "--layer", "7", "--json"]) == 2
    assert "Layer 7 does not exist" in capsys.readouterr().err


def _same(a, b) -> None:
    """Equal, the patching to float rounding (a lone head is patched on its own, the map's heads in one batch)."""
    ja, jb = a.to_json(), b.to_json()
    for j in (ja, jb):
        del j["patching"], j["mean_patching"]
    assert ja == jb and np.array_equal(a.pattern, b.pattern)
    assert a.patching == pytest.approx(b.patching, abs=1e-5)


def test_one_head_patched_alone_equals_the_batched_run_over_every_head(handle, tiny_data):
    """`_head_patching` (a lone click) gives each head what the map's batched run gives it, to float rounding."""
    import backend.mt.head_detail as head_detail_module
    from backend.mt.head_detail import _head_patching, _prompt_patching

    heads = dataclasses.replace(HEADS, dataset=tiny_data.digest)
    head_map = find_heads(handle, heads, tiny_data).value
    pairs = head_detail_module.head_pairs(heads, tiny_data)[0]
    head_detail_module._PATCHED.clear()
    batched = np.stack(_prompt_patching(handle, heads, head_map, pairs, lambda *a: None))  # [prompts, L, H]
    alone = np.array([[_head_patching(handle, heads, head_map, pairs, layer, head, lambda *a: None)
                       for head in range(handle.info.n_heads)] for layer in range(handle.info.n_layers)])
    assert np.abs(batched).max() > 1e-3  # the comparison says something: heads move log p(target)
    np.testing.assert_allclose(alone.transpose(2, 0, 1), batched, atol=1e-5)


def test_a_lone_click_does_not_run_the_batched_patching(handle, tiny_data, monkeypatch):
    import backend.mt.head_detail as head_detail_module

    head_detail_module._PATCHED.clear()
    monkeypatch.setattr(head_detail_module, "patch_scores", lambda *a, **k: pytest.fail("patched every head"))
    config = HeadDetailConfig(heads=HEADS, layer=1, head=3, top_k=4)
    detail = head_detail(handle, config, tiny_data).value
    head_map = find_heads(handle, HEADS, tiny_data).value
    assert detail.mean_patching == pytest.approx(float(head_map.patching[1, 3]), abs=1e-4)


def test_every_head_of_a_map_at_once_equals_each_click(handle, tiny_data):
    """`map_head_details` (one pass, stored per head) gives each head exactly what a click computes alone, and a
    click after it is a store read."""
    import backend.mt.head_detail as head_detail_module
    from backend.mt.head_detail import compute_head_details, map_head_details

    heads = dataclasses.replace(HEADS, dataset=tiny_data.digest)
    batch = map_head_details(handle, heads, tiny_data, example=1)
    info = handle.info
    assert batch.computed == len(batch.values) == info.n_layers * info.n_heads and batch.hits == 0
    for layer, head in ((0, 0), (1, 2), (info.n_layers - 1, info.n_heads - 1)):
        config = HeadDetailConfig(heads=heads, layer=layer, head=head, example=1)
        head_detail_module._PATCHED.clear()  # the patching too is computed again, not remembered
        alone = compute_head_details(handle, [config], tiny_data)[0]
        _same(batch.values[layer * info.n_heads + head], alone)
        clicked = head_detail(handle, config, tiny_data)
        assert clicked.cached
        _same(clicked.value, alone)
    assert map_head_details(handle, heads, tiny_data, example=1).hits == len(batch.values)


def test_another_prompt_of_a_patched_map_reuses_its_patching(handle, tiny_data, monkeypatch):
    """The drill-down's prompt choice: the map's patching (the same on every prompt) is not run again."""
    import backend.mt.head_detail as head_detail_module

    first = head_detail(handle, HeadDetailConfig(heads=HEADS, layer=0, head=1, example=0, top_k=7), tiny_data).value
    monkeypatch.setattr(head_detail_module, "patch_scores", lambda *a, **k: pytest.fail("patched again"))
    monkeypatch.setattr(head_detail_module, "patch_head", lambda *a, **k: pytest.fail("patched again"))
    other = head_detail(handle, HeadDetailConfig(heads=HEADS, layer=0, head=1, example=1, top_k=7), tiny_data).value
    assert other.patching == first.patching and other.tokens != first.tokens
