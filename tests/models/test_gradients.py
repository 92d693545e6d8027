"""Per-example gradients (backend/models/gradients.py) against central finite differences of the loss, on a tiny
random model in float64: the full weight gradient of chosen layers, and the LoRA factors' gradient through the
merged weight W + s·B·A; the module's weights and requires_grad flags are left as they were."""
from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from backend.errors import UserError
from backend.models.gradients import LoraFactor, gradient_size, layer_modules, loss_gradient
from tests.support.tiny import build_tiny_model

EPS = 1e-3  # Llama's RMSNorm computes in fp32 even in a float64 model: a smaller step drowns in its rounding


def _tiny(tmp_path_factory, arch: str):
    path = build_tiny_model(arch, tmp_path_factory.mktemp(f"tiny-grad-{arch}"), seed=3)
    return AutoModelForCausalLM.from_pretrained(path).double().eval()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return _tiny(tmp_path_factory, "llama")


@pytest.fixture(scope="module", params=["llama", "gpt2"])  # GPT-2's projections are Conv1D, stored [in, out]
def any_model(request, tmp_path_factory):
    return _tiny(tmp_path_factory, request.param)


def _loss(model, ids: torch.Tensor, n_prompt: int) -> float:
    with torch.no_grad():
        log_p = torch.log_softmax(model(input_ids=ids).logits[0, n_prompt - 1:-1].double(), -1)
        return float(-log_p.gather(1, ids[0, n_prompt:, None]).mean())


def _ids() -> torch.Tensor:
    return torch.tensor([[5, 17, 101, 33, 7, 250, 12, 9, 64, 3]])


def _check(analytic: float, numeric: float) -> None:
    assert analytic == pytest.approx(numeric, rel=2e-3, abs=1e-5)


def test_full_weight_gradient_of_chosen_layers_equals_finite_differences(any_model):
    model, ids, n_prompt = any_model, _ids(), 4
    modules = layer_modules(model, [1])
    before = {name: p.requires_grad for name, p in model.named_parameters()}
    out = loss_gradient(model, ids, n_prompt, modules)
    assert out.vector.numel() == gradient_size(model, modules, None)
    assert out.loss == pytest.approx(_loss(model, ids, n_prompt), rel=1e-6) and out.target_tokens == 6
    assert {name: p.requires_grad for name, p in model.named_parameters()} == before
    named = dict(model.named_modules())
    offset = 0
    for name in modules:
        weight = named[name].weight
        flat = out.vector[offset: offset + weight.numel()]
        for index in (0, weight.numel() // 2 + 3, weight.numel() - 1):
            original = weight.data.view(-1)[index].item()
            with torch.no_grad():
                weight.view(-1)[index] = original + EPS
                up = _loss(model, ids, n_prompt)
                weight.view(-1)[index] = original - EPS
                down = _loss(model, ids, n_prompt)
                weight.view(-1)[index] = original
            _check(float(flat[index]), (up - down) / (2 * EPS))
        offset += weight.numel()


def test_lora_factor_gradient_equals_finite_differences_through_the_merged_weight(model):
    ids, n_prompt = _ids(), 3
    torch.manual_seed(0)
    modules = tuple(n for n in layer_modules(model, [0]) if n.endswith(("q_proj", "down_proj")))
    named = dict(model.named_modules())
    factors = {name: LoraFactor(a=torch.randn(4, named[name].in_features, dtype=torch.float64) * 0.1,
                                b=torch.randn(named[name].out_features, 4, dtype=torch.float64) * 0.1, scale=2.0)
               for name in modules}
    out = loss_gradient(model, ids, n_prompt, modules, factors)
    assert out.vector.numel() == gradient_size(model, modules, factors)
    offset = 0
    for name in modules:
        f, weight = factors[name], named[name].weight
        for which, factor in (("a", f.a), ("b", f.b)):
            flat = out.vector[offset: offset + factor.numel()]
            for index in (1, factor.numel() - 2):
                direction = torch.zeros_like(factor).view(-1)
                direction[index] = EPS
                direction = direction.view_as(factor)
                # the merged weight moves by s·B·dA (or s·dB·A): the loss of that model, both ways
                change = f.scale * (f.b @ direction if which == "a" else direction @ f.a)
                with torch.no_grad():
                    weight += change
                    up = _loss(model, ids, n_prompt)
                    weight -= 2 * change
                    down = _loss(model, ids, n_prompt)
                    weight += change
                _check(float(flat[index]), (up - down) / (2 * EPS))
            offset += factor.numel()


def test_an_empty_target_or_unknown_layers_are_refused(model):
    with pytest.raises(UserError, match="target is empty"):
        loss_gradient(model, _ids(), 10, layer_modules(model, [0]))
    with pytest.raises(UserError, match="layers"):
        layer_modules(model, [7])
