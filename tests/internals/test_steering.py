"""Steering: coefficient 0 is the plain greedy generation; the vector is the plus-minus difference of the residual
entering the layer (a plain torch hook reads it here); steered rows equal one steered run each."""
import pytest
import torch

from backend.internals.intervene_config import SteerConfig
from backend.internals.steering import compute_steer, mean_residual
from backend.models.architecture import decoder_layers
from backend.models.kernel import decode, greedy_policy, start
from backend.models.rules import model_stop_ids

PROMPT = "I think you are"


def _plain(model, tokenizer, n):
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    out = decode(start(model, ids, max_new_tokens=n), greedy_policy, n, model_stop_ids(model, tokenizer))
    return tokenizer.decode(out.row(0, keep_stop=False), skip_special_tokens=True)


def test_coefficient_zero_is_the_plain_generation(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    result = compute_steer(model, tokenizer, SteerConfig(layer=1, coefficients="0,40", max_new_tokens=6,
                                                         prompt=PROMPT))
    assert result.generations[0] == _plain(model, tokenizer, 6)
    with torch.no_grad():
        own = model(input_ids=torch.tensor([tokenizer(PROMPT)["input_ids"]])).logits[0, -1]
    assert result.lens_tokens[0][-1] == tokenizer.decode([int(own.argmax())])
    assert result.lens_tokens[0] != result.lens_tokens[1] or result.generations[0] != result.generations[1]


def test_vector_is_the_residual_difference(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    seen = []
    handle = decoder_layers(model)[1].register_forward_pre_hook(lambda m, args: seen.append(args[0][0, -1]))
    for text in ("Love", "Joy", "Hate"):
        with torch.no_grad():
            model(input_ids=torch.tensor([tokenizer(text)["input_ids"]]))
    handle.remove()
    expected = (seen[0] + seen[1]) / 2 - seen[2]
    got = mean_residual(model, tokenizer, ("Love", "Joy"), 1) - mean_residual(model, tokenizer, ("Hate",), 1)
    assert torch.allclose(got, expected, atol=1e-5)
    result = compute_steer(model, tokenizer, SteerConfig(plus="Love\nJoy", minus="Hate", layer=1, coefficients="2",
                                                         max_new_tokens=2))
    assert result.vector_norm == pytest.approx(float(expected.norm()), rel=1e-4)
