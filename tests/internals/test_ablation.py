"""Ablation: nothing ablated changes nothing; zero-ablating a head is the hooks layer's HeadEdit zero; mean-ablating
neurons replaces them by their mean over the reference texts, computed here with a plain torch hook."""
import pytest
import torch

from backend.internals.ablation import _run, compute_ablate
from backend.internals.intervene_config import AblateConfig
from backend.models.architecture import mlp_up_proj
from backend.models.hooks import HeadEdit, Hooks
from backend.models.sites import Ablation
from tests.internals.helpers import PROMPT

REFERENCE = "A short reference line.\nAnother one, a little longer than the first."


def _id(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"][0]


def _final(model, tokenizer, text=PROMPT):
    with torch.no_grad():
        return model(input_ids=torch.tensor([tokenizer(text)["input_ids"]])).logits[0, -1].float()


def test_ablating_nothing_changes_nothing(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    config = AblateConfig(prompt=PROMPT, heads="1.2", generate=4)
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    plain = _run(model, tokenizer, ids, [], 5, None, config, frozenset())
    empty = [Ablation("head", 1, units=()), Ablation("neuron", 0, units=())]
    assert _run(model, tokenizer, ids, empty, 5, None, config, frozenset()) == plain
    assert plain.logit_diff == pytest.approx(float(_final(model, tokenizer)[5]), abs=1e-4)
    result = compute_ablate(model, tokenizer, config)
    assert result.before.top[0][0] == tokenizer.decode([int(_final(model, tokenizer).argmax())])


def test_zero_head_is_the_hooks_layers_zero(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_ablate(model, tokenizer, AblateConfig(prompt=PROMPT, heads="1.2,1.0", mode="zero", target="a",
                                                           contrast="e", generate=0))
    with Hooks(model, head_edits=[HeadEdit(1, (2, 0), "zero")]):
        logits = _final(model, tokenizer)
    assert result.after.logit_diff == pytest.approx(float(logits[_id(tokenizer, "a")] - logits[_id(tokenizer, "e")]), abs=1e-4)
    assert result.after.generation == "" and result.ablated == ("head 1.2", "head 1.0")


def test_mean_neurons_are_replaced_by_their_reference_mean(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    layer, picked = 1, [3, 17]
    seen = []
    handle = mlp_up_proj(model, layer).register_forward_hook(lambda m, a, out: seen.append(out[0]))
    for line in REFERENCE.splitlines():
        _final(model, tokenizer, line)
    handle.remove()
    mean = torch.cat(seen).mean(0)[picked]

    def replace(module, args, out):
        out = out.clone()
        out[..., picked] = mean
        return out
    handle = mlp_up_proj(model, layer).register_forward_hook(replace)
    expected = _final(model, tokenizer)
    handle.remove()
    result = compute_ablate(model, tokenizer, AblateConfig(prompt=PROMPT, neurons="1:3,1:17", mode="mean",
                                                           reference=REFERENCE, target="a", generate=0))
    assert result.after.logit_diff == pytest.approx(float(expected[_id(tokenizer, "a")]), abs=1e-4)
