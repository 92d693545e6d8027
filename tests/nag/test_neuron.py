"""The neuron drill-down (`nag neuron`): top contexts are the argmax activations of a plain per-document forward,
the logit effects are the column's direction through the model's own norms and lm_head, errors are one line."""
import json

import numpy as np
import pytest
import torch

from backend.__main__ import main
from backend.corpus.documents import documents_from_texts
from backend.errors import UserError
from backend.models import load
from backend.models.architecture import final_norm, mlp_down_proj, post_mlp_norm
from backend.models.hooks import capture
from backend.models.mlp_readout import neuron_logit_effects
from backend.nag import TargetSet
from backend.nag.neuron import NeuronConfig, neuron_detail

TEXTS = ["the cat sat on the mat", "a dog barked twice at noon", "x = 3 * (y + 2)", "def f(a): return a",
         "rain fell on the quiet town", "seven plus five is twelve", "she wrote a letter", "zzz qqq jjj"]


@pytest.fixture(scope="module")
def handle():
    return load("tiny-llama")


def _docs():
    return documents_from_texts(TEXTS, prefix="d")


def test_top_contexts_are_the_argmax_activations(handle):
    layer, neuron = 1, 5
    config = NeuronConfig(layer=layer, neuron=neuron, contexts=3, window=2, max_length=16)
    targets = [TargetSet("t", tuple(_docs()[:3]))]
    detail = neuron_detail(handle, config, _docs(), targets).value
    best = []  # one document at a time, unbatched, through the hooks
    for doc in _docs():
        ids = handle.tokenizer(doc.text, add_special_tokens=False)["input_ids"][:16]
        acts = capture(handle.model, torch.tensor([ids]), mlp_up=[layer]).mlp_up[layer][0, :, neuron].float()
        p = int(acts.abs().argmax())
        best.append((-abs(float(acts[p])), doc.id, p, float(acts[p]), ids))
    best.sort(key=lambda b: (b[0], [d.id for d in _docs()].index(b[1])))
    assert [c.doc_id for c in detail.contexts] == [b[1] for b in best[:3]]
    for context, (_, _, p, value, ids) in zip(detail.contexts, best):
        assert context.position == p and context.activation == pytest.approx(value, abs=1e-5)
        assert context.token == handle.tokenizer.decode(ids[p:p + 1])
        assert context.left == handle.tokenizer.decode(ids[max(0, p - 2):p])
    assert detail.scanned_docs == len(TEXTS) and int(detail.hist_counts.sum()) == detail.scanned_tokens
    assert detail.hist_edges[0] <= min(c.activation for c in detail.contexts)
    (firing,) = detail.targets
    assert firing.name == "t" and firing.documents == 3 and 0 <= firing.in_top_k <= 1 and firing.weight >= 0
    again = neuron_detail(handle, config, _docs(), targets)
    assert again.cached and again.value.contexts == detail.contexts


@pytest.mark.parametrize("model_id", ["tiny-llama", "tiny-gpt2", "tiny-gemma3"])
@torch.no_grad()
def test_logit_effects_are_the_column_through_the_norms(model_id):
    """Up to a positive factor: lm_head(final_norm(post_norm(column))) without the norms' and lm_head's biases."""
    model = load(model_id).model
    layer, neuron = 0, 7
    weight = mlp_down_proj(model, layer).weight.detach().float()
    x = weight[neuron] if model.config.model_type == "gpt2" else weight[:, neuron]
    for norm in (post_mlp_norm(model, layer), final_norm(model)):
        if norm is not None:
            x = norm(x[None])[0].float() - (norm.bias.float() if getattr(norm, "bias", None) is not None else 0)
    head = model.get_output_embeddings()
    expected = head(x[None])[0].float() - (head.bias.float() if getattr(head, "bias", None) is not None else 0)
    got = neuron_logit_effects(model, layer, neuron)
    ratio = float(expected.norm() / got.norm())
    assert ratio > 0 and torch.allclose(got * ratio, expected, atol=1e-4 * float(expected.abs().max()))


def test_unknown_layer_or_neuron_is_a_user_error(handle):
    with pytest.raises(UserError, match="Layer 5 does not exist"):
        neuron_detail(handle, NeuronConfig(layer=5), _docs())
    with pytest.raises(UserError, match="Neuron 100000 does not exist"):
        neuron_detail(handle, NeuronConfig(neuron=100000), _docs())
    with pytest.raises(UserError, match="no non-empty document"):
        neuron_detail(handle, NeuronConfig(), [])


def test_cli_neuron_json_and_exit_2(tmp_path, capsys):
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(TEXTS))
    common = ["nag", "neuron", "--model", "tiny-llama", "--pool", str(pool), "--max-length", "16"]
    assert main([*common, "--layer", "0", "--neuron", "2", "--contexts", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["layer"], out["neuron"]) == (0, 2) and len(out["contexts"]) == 2
    assert out["scanned_docs"] == len(TEXTS) and sum(out["histogram"]["counts"]) == out["scanned_tokens"]
    assert out["targets"][0]["documents"] > 0  # the default sample target domain
    assert np.all(np.diff([t["effect"] for t in out["promoted"]]) <= 0)
    assert main([*common, "--layer", "0", "--neuron", "-1", "--json"]) == 2
    assert main([*common, "--layer", "9", "--json"]) == 2
    assert "Layer 9 does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("model_id", ["tiny-gpt2", "tiny-gemma3", "tiny-qwen2"])
def test_a_forward_stopped_at_the_layer_reads_what_a_full_forward_reads(model_id):
    from backend.models.mlp_readout import mlp_up_columns

    model = load(model_id).model
    ids, mask = torch.tensor([[5, 9, 14, 20, 7], [3, 4, 8, 0, 0]]), torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    full = capture(model, ids, mask, mlp_up=[0, 1]).mlp_up
    assert torch.equal(mlp_up_columns(model, ids, mask, {0: list(range(full[0].shape[-1]))})[0], full[0])
    read = mlp_up_columns(model, ids, mask, {0: [3, 1], 1: [2]})  # several layers in one forward, stopped at 1
    assert torch.equal(read[0], full[0][..., [3, 1]]) and torch.equal(read[1], full[1][..., [2]])
    out = model(input_ids=ids, attention_mask=mask)  # the hook is gone: a later forward runs to the end
    assert out.logits.shape[:2] == ids.shape


def test_every_neuron_at_once_equals_each_click(handle):
    """`neuron_details` (one pass over the documents, stored per neuron) gives each neuron exactly what a click
    computes alone, and a click after it is a store read."""
    from backend.nag.neuron import compute_neurons, neuron_details

    targets = [TargetSet("t", tuple(_docs()[:3]))]
    configs = [NeuronConfig(layer=layer, neuron=neuron, contexts=3, window=3, max_length=16)
               for layer, neuron in ((0, 1), (1, 5), (1, 9), (0, 30))]
    batch = neuron_details(handle, configs, _docs(), targets)
    assert batch.computed == len(configs) and batch.hits == 0
    for config, value in zip(configs, batch.values):
        alone = compute_neurons(handle, [config], _docs(), targets)[0]  # computed again, not read
        assert value.to_json() == alone.to_json()
        assert np.array_equal(value.hist_counts, alone.hist_counts)
        clicked = neuron_detail(handle, config, _docs(), targets)
        assert clicked.cached and clicked.value.to_json() == alone.to_json()
    assert neuron_details(handle, configs, _docs(), targets).hits == len(configs)
