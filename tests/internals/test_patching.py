"""Activation patching: the batched, prefix-cached runs equal one plain forward per patch hooked independently
(a torch hook on the decoder layer / o_proj / down_proj, or the hooks layer's HeadEdit), and the normalisation
reads 1 on the clean run and 0 on the corrupted one."""
import numpy as np
import pytest
import torch

from backend.errors import UserError
from backend.internals.intervene_config import PatchConfig
from backend.internals.patching import compute_patch, logit_diff, patched_runs, read_clean, units_of
from backend.models.architecture import arch_info, attention_out_proj, decoder_layers, mlp_down_proj
from backend.models.hooks import HeadEdit, Hooks
from tests.internals.helpers import PROMPT

CORRUPTED = "Lyons is a city in Fr"  # one word changed, the same byte length
TARGET, CONTRAST = "a", "e"
assert len(CORRUPTED) == len(PROMPT)


def _ids(tokenizer, text):
    return torch.tensor([tokenizer(text)["input_ids"]])


def _final_logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits[0, -1].float()


def _replace_hook(position, value, is_input):
    def swap(x):
        x = x.clone()
        x[:, position] = value
        return x
    if is_input:
        return lambda module, args: (swap(args[0]), *args[1:])
    return lambda module, args, output: swap(output)


def _reference(model, tokenizer, site, layer, head, position):
    """One forward of the corrupted prompt with one unit replaced by the clean run's value, hooked directly."""
    clean, corrupted = _ids(tokenizer, PROMPT), _ids(tokenizer, CORRUPTED)
    if site == "head":
        with Hooks(model, read_heads=[layer]) as hooks:
            _final_logits(model, clean)
        z = hooks.head_outputs[layer][0, :, head]  # [T, head_dim]
        with Hooks(model, head_edits=[HeadEdit(layer, (head,), "replace", z[:, None])]):
            return _final_logits(model, corrupted)
    module, is_input = {"resid_pre": (decoder_layers(model)[layer], True),
                        "attn_out": (attention_out_proj(model, layer), False),
                        "mlp_out": (mlp_down_proj(model, layer), False)}[site]
    seen = []
    handle = (module.register_forward_pre_hook(lambda m, args: seen.append(args[0])) if is_input else
              module.register_forward_hook(lambda m, args, out: seen.append(out)))
    _final_logits(model, clean)
    handle.remove()
    handle = (module.register_forward_pre_hook(_replace_hook(position, seen[0][0, position], True)) if is_input
              else module.register_forward_hook(_replace_hook(position, seen[0][0, position], False)))
    try:
        return _final_logits(model, corrupted)
    finally:
        handle.remove()


@pytest.mark.parametrize("site", ["resid_pre", "attn_out", "mlp_out", "head"])
def test_batched_patching_equals_one_hooked_forward_per_patch(tiny_handle, site):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_patch(model, tokenizer, PatchConfig(clean=PROMPT, corrupted=CORRUPTED, target=TARGET,
                                                         contrast=CONTRAST, site=site))
    info = arch_info(model)
    target, contrast = result.target_id, result.contrast_id
    clean = logit_diff(_final_logits(model, _ids(tokenizer, PROMPT)), target, contrast)
    corrupted = logit_diff(_final_logits(model, _ids(tokenizer, CORRUPTED)), target, contrast)
    assert result.clean_logit_diff == pytest.approx(float(clean), abs=1e-4)
    assert result.corrupted_logit_diff == pytest.approx(float(corrupted), abs=1e-4)
    units, shape = units_of(site, info.n_layers, info.n_heads, len(PROMPT))
    assert result.values.shape == shape and result.top_ids.shape == (*shape, 5)
    rng = np.random.default_rng(0)
    for index in rng.choice(len(units), size=min(5, len(units)), replace=False):
        layer, head, position = units[index]
        expected = (logit_diff(_reference(model, tokenizer, site, layer, head, position), target, contrast)
                    - corrupted) / (clean - corrupted)
        assert result.values.flat[index] == pytest.approx(float(expected), abs=1e-3)


def test_self_patches_read_one_and_zero(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    info = arch_info(model)
    result = compute_patch(model, tokenizer, PatchConfig(clean=PROMPT, corrupted=CORRUPTED, target=TARGET,
                                                         contrast=CONTRAST, site="resid_pre"))
    clean_diff, corrupted_diff = result.clean_logit_diff, result.corrupted_logit_diff
    for source, value in ((PROMPT, 1.0), (CORRUPTED, 0.0)):
        ids = _ids(tokenizer, source)
        _, acts = read_clean(model, ids, "resid_pre")
        units = [(layer, None, len(PROMPT) - 1) for layer in range(info.n_layers)]
        diffs, _, _ = patched_runs(model, ids, "resid_pre", units, acts, result.target_id, result.contrast_id, 3)
        assert np.allclose((diffs.numpy() - corrupted_diff) / (clean_diff - corrupted_diff), value, atol=1e-3)
    # at layer 0 a position whose token is the same in both prompts holds the same residual: patching it does nothing
    same = [p for p in range(len(PROMPT)) if PROMPT[p] == CORRUPTED[p]]
    assert len(same) > 10 and np.allclose(result.values[0, same], 0.0, atol=1e-4)


def test_top_tokens_of_a_cell_and_json(tiny_handle):
    result = compute_patch(tiny_handle.model, tiny_handle.tokenizer, PatchConfig(
        clean=PROMPT, corrupted=CORRUPTED, target=TARGET, contrast=CONTRAST, site="head_pos", top_k=3))
    info = arch_info(tiny_handle.model)
    assert result.values.shape == (info.n_layers, info.n_heads, len(PROMPT))
    cell = result.top_at((1, 2, 4))
    assert len(cell) == 3 and cell[0][1] >= cell[1][1] >= cell[2][1]
    shaped = result.to_json()
    assert shaped["site"] == "head_pos" and len(shaped["values"][0][0]) == len(PROMPT)
    assert len(shaped["corrupted_tokens"]) == len(shaped["tokens"]) == len(PROMPT)


@pytest.mark.parametrize("corrupted, target, contrast, words", [
    ("Lyon is a city in Fr", TARGET, CONTRAST, "21 tokens and the corrupted one 20"),
    (CORRUPTED, "ab", CONTRAST, "is 2 tokens"),
    (CORRUPTED, "a", "a", "same token"),
])
def test_bad_pairs_are_refused(tiny_handle, corrupted, target, contrast, words):
    with pytest.raises(UserError, match=words):
        compute_patch(tiny_handle.model, tiny_handle.tokenizer, PatchConfig(
            clean=PROMPT, corrupted=corrupted, target=target, contrast=contrast))
