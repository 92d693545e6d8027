"""Input attribution against hand computations on tiny models: integrated gradients' completeness within its
reported delta, gradient × input from one autograd call, token ablation from one forward per replaced token, and a
continuation's targets × sources matrix."""
import numpy as np
import pytest
import torch

from backend.internals.attribution import compute_attribution
from backend.internals.attribution_methods import ATTRIBUTIONS
from backend.internals.config import AttributeConfig
from tests.internals.helpers import VARIANTS

PROMPT = "The cat sat on"


def _ids(tokenizer, text=PROMPT):
    return torch.tensor([tokenizer(text)["input_ids"]])


def _f(model, target, function, **inputs):
    logits = model(**inputs).logits[:, -1].float()
    return (torch.softmax(logits, -1) if function == "probability" else logits)[:, target]


@pytest.mark.parametrize("function", ["logit", "probability"])
def test_integrated_gradients_sum_to_the_change_within_the_delta(tiny_handle, function):
    result = compute_attribution(tiny_handle.model, tiny_handle.tokenizer,
                                 AttributeConfig(prompt=PROMPT, method="integrated_gradients", function=function))
    ids = _ids(tiny_handle.tokenizer)
    with torch.no_grad():
        f_input = float(_f(tiny_handle.model, result.target_ids[0], function, input_ids=ids)[0])
    assert result.f_input[0] == pytest.approx(f_input, rel=1e-5, abs=1e-7)
    change = result.f_input[0] - result.f_baseline[0]
    gap = float(np.sum(result.scores[0])) - change
    assert abs(gap) <= abs(result.delta) + 1e-6 * max(1.0, abs(change))


def test_saliency_is_the_hand_computed_gradient_times_input(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_attribution(model, tokenizer, AttributeConfig(prompt=PROMPT, method="saliency", target="a"))
    ids = _ids(tokenizer)
    embeds = model.get_input_embeddings()(ids).detach().requires_grad_(True)
    f = _f(model, tokenizer("a", add_special_tokens=False)["input_ids"][0], "probability", inputs_embeds=embeds)
    (grad,) = torch.autograd.grad(f.sum(), embeds)
    expected = (grad * embeds).sum(-1)[0].detach().double().numpy()
    assert np.allclose(result.scores[0], expected, rtol=1e-4, atol=1e-9)


def test_ablation_is_one_replaced_token_at_a_time():
    model, tokenizer = VARIANTS["llama-biases"]()
    result = compute_attribution(model, tokenizer, AttributeConfig(prompt=PROMPT, method="ablation",
                                                                   function="logit"))
    ids, target = _ids(tokenizer), result.target_ids[0]
    fill = tokenizer.unk_token_id if tokenizer.unk_token_id is not None else tokenizer.pad_token_id
    with torch.no_grad():
        full = float(_f(model, target, "logit", input_ids=ids)[0])
        expected = []
        for i in range(ids.shape[1]):
            ablated = ids.clone()
            ablated[0, i] = fill
            expected.append(full - float(_f(model, target, "logit", input_ids=ablated)[0]))
    assert np.allclose(result.scores[0], expected, atol=1e-5)


def test_a_continuation_is_greedy_and_each_token_sees_only_what_precedes_it():
    model, tokenizer = VARIANTS["llama-biases"]()
    result = compute_attribution(model, tokenizer, AttributeConfig(prompt=PROMPT, method="saliency", generate=4))
    ids = _ids(tokenizer)
    with torch.no_grad():  # plain greedy, step by step, for the tokens the kernel wrote
        for target in result.target_ids:
            assert int(model(input_ids=ids).logits[0, -1].argmax()) == target
            ids = torch.cat([ids, torch.tensor([[target]])], 1)
    n = len(result.targets)
    assert result.scores.shape == (n, result.n_prompt + n - 1) and result.tokens[result.n_prompt:] == \
        tuple(tokenizer.decode([t]) for t in result.target_ids[:-1])
    for i in range(n):
        assert np.isfinite(result.scores[i, :result.n_prompt + i]).all()
        assert np.isnan(result.scores[i, result.n_prompt + i:]).all()
    shape = result.to_json()
    assert shape["delta"] is None and shape["scores"][0][-1] is None and len(shape["targets"]) == n


@pytest.mark.parametrize("method", ATTRIBUTIONS.names())
def test_every_method_scores_every_token_and_completes_when_it_says_so(method):
    model, tokenizer = VARIANTS["gemma3-softcap"]()
    result = compute_attribution(model, tokenizer, AttributeConfig(prompt=PROMPT, method=method, function="logit"))
    assert result.scores.shape == (1, len(result.tokens)) and np.isfinite(result.scores).all()
    assert (result.deltas is not None) == ATTRIBUTIONS.get(method).complete
    if ATTRIBUTIONS.get(method).complete:
        change = result.f_input[0] - result.f_baseline[0]
        assert float(result.scores.sum()) == pytest.approx(change, abs=abs(result.delta) + 1e-5)
