"""DLA completeness: embedding + heads + MLPs + biases rebuild the final residual and sum to the model's logit."""
import numpy as np
import pytest
import torch

from backend.internals.config import DlaConfig
from backend.internals.decompose import decompose, run
from backend.internals.dla import compute_dla
from backend.models.readout import capped
from tests.internals.helpers import PROMPT, VARIANTS


def _check_complete(model, tokenizer, config: DlaConfig):
    result = compute_dla(model, tokenizer, config)
    assert result.heads.shape == (model.config.num_hidden_layers if hasattr(model.config, "num_hidden_layers")
                                  else model.config.n_layer, 4)
    parts = result.embed + float(result.heads.sum(dtype=np.float64)) + float(result.mlps.sum(dtype=np.float64)) \
        + result.biases
    assert parts == pytest.approx(result.total, abs=1e-9)
    assert result.total == pytest.approx(result.logit, abs=2e-5 * max(1.0, abs(result.logit)))
    ids = torch.tensor([tokenizer(config.prompt)["input_ids"]])
    with torch.no_grad():
        own = model(input_ids=ids).logits[0, result.position].float()  # the model's own output, soft-capped
    expected = own[result.target_id] - (own[result.contrast_id] if result.contrast_id is not None else 0.0)
    assert result.output_logit == pytest.approx(float(expected), abs=2e-5)
    return result


def test_parts_sum_to_the_logit_on_every_architecture(tiny_handle):
    result = _check_complete(tiny_handle.model, tiny_handle.tokenizer, DlaConfig(prompt=PROMPT))
    assert np.abs(result.heads).max() > 0 and np.abs(result.mlps).max() > 0
    _check_complete(tiny_handle.model, tiny_handle.tokenizer, DlaConfig(prompt=PROMPT, target="a", contrast="e",
                                                                        position=3))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_biases_and_soft_capping_are_accounted(variant):
    model, tokenizer = VARIANTS[variant]()
    result = _check_complete(model, tokenizer, DlaConfig(prompt=PROMPT, target="x"))
    if variant == "llama-biases":
        assert abs(result.biases) > 1e-3  # o_proj and down_proj biases are there and counted
    else:  # soft-capping changes the output logit; the parts sum to the logit before it
        assert result.output_logit == pytest.approx(float(capped(model, torch.tensor(result.logit))), abs=1e-5)
        assert abs(result.output_logit - result.logit) > 1e-3


def test_the_parts_rebuild_the_final_residual(tiny_handle):
    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    traced, final = run(model, ids)
    for position in (0, 7, ids.shape[1] - 1):
        d = decompose(model, traced, final, position)
        rebuilt = d.embed + d.heads.sum((0, 1)) + d.mlps.sum(0) + d.biases
        assert torch.allclose(rebuilt, final[0, position], atol=2e-5, rtol=1e-5)


def test_a_contrast_equal_to_the_target_is_refused(tiny_handle):
    """Issue 55 §5: target minus itself is zero for every part (before: a map of zeros)."""
    from backend.errors import UserError

    model, tokenizer = tiny_handle.model, tiny_handle.tokenizer
    with pytest.raises(UserError, match="contrast token is the target token"):
        DlaConfig(prompt=PROMPT, target="a", contrast="a")
    for position in range(-1, -len(PROMPT), -1):  # a position whose prediction is a token one can type
        predicted = compute_dla(model, tokenizer, DlaConfig(prompt=PROMPT, position=position))
        if tokenizer(predicted.target_token, add_special_tokens=False)["input_ids"] == [predicted.target_id]:
            break
    with pytest.raises(UserError, match="contrast token is the model's prediction here"):
        compute_dla(model, tokenizer, DlaConfig(prompt=PROMPT, position=position, contrast=predicted.target_token))
