"""Per-example gradients of a teacher-forced loss, for comparing examples by the direction they would move a model.

The loss is the mean negative log-likelihood of a target continuation (a correct solution) after its prompt. For a
model loaded with a merged LoRA adapter, W' = W + s·B·A, so the gradient with respect to the adapter's factors
follows from G = dL/dW' of each adapted weight: dL/dA = s·Bᵀ·G and dL/dB = s·G·Aᵀ, with G = Σ_t δ_t x_tᵀ over positions
(x: the module's input, δ: the gradient at its output). Forward hooks keep x and the output, one autograd.grad over
the outputs gives every δ, so no weight gradient is formed and no parameter's requires_grad changes (the module is
shared by every session). Without an adapter the gradient is the full G of chosen modules. All under the model lock.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from backend.errors import UserError
from backend.models.architecture import layer_linear_modules, output_axis
from backend.models.locks import model_lock
from backend.models.rules import check_room

ADAPTER_KEY = re.compile(r"^base_model\.model\.(?P<module>.+)\.lora_(?P<which>[AB])\.weight$")


@dataclass(frozen=True)
class LoraFactor:
    """One adapted module's LoRA factors: W' = W + scale · b @ a."""

    a: torch.Tensor  # [r, in]
    b: torch.Tensor  # [out, r]
    scale: float


@dataclass(frozen=True)
class ExampleGradient:
    vector: torch.Tensor  # [P] (fp32, or the model's dtype when wider): flattened, modules in the order asked
    loss: float  # mean NLL per target token (nats)
    target_tokens: int


def adapter_factors(adapter_dir: Path) -> dict[str, LoraFactor]:
    """The LoRA factors of a peft adapter directory, keyed by the adapted module's name in the merged model."""
    from safetensors.torch import load_file

    config = json.loads((adapter_dir / "adapter_config.json").read_text())
    scale = float(config["lora_alpha"]) / float(config["r"])
    found: dict[str, dict[str, torch.Tensor]] = {}
    for key, tensor in load_file(str(adapter_dir / "adapter_model.safetensors")).items():
        match = ADAPTER_KEY.match(key)
        if match:
            found.setdefault(match["module"], {})[match["which"]] = tensor.float()
    return {name: LoraFactor(a=ab["A"], b=ab["B"], scale=scale) for name, ab in sorted(found.items())
            if set(ab) == {"A", "B"}}


def layer_modules(model: nn.Module, layers: Sequence[int]) -> tuple[str, ...]:
    """The linear modules (attention and MLP projections) of the chosen transformer layers, for a model without an
    adapter; UserError naming `layers` when none matches."""
    names = layer_linear_modules(model, layers)
    if not names:
        raise UserError(f"layers: no linear modules in layers {sorted(set(layers))} of this model.")
    return names


def gradient_size(model: nn.Module, modules: Sequence[str], factors: Mapping[str, LoraFactor] | None) -> int:
    """P, the length of every ExampleGradient.vector for these modules."""
    named = dict(model.named_modules())
    if factors:
        return sum(factors[n].a.numel() + factors[n].b.numel() for n in modules)
    return sum(named[n].weight.numel() for n in modules)


def loss_gradient(model: nn.Module, input_ids: torch.Tensor, n_prompt: int, modules: Sequence[str],
                  factors: Mapping[str, LoraFactor] | None = None) -> ExampleGradient:
    """The gradient of the mean NLL of `input_ids[0, n_prompt:]` (the target) given what precedes it, with respect to
    the LoRA factors of `modules` (when `factors` is given) or their full weights. input_ids: `[1, T]`."""
    length = input_ids.shape[1]
    if not 0 < n_prompt < length:
        raise UserError(f"The target is empty: {length} tokens with a prompt of {n_prompt}.")
    check_room(model, length, 0)
    named = dict(model.named_modules())
    captured: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def keep(name: str):
        def hook(module, args, output):
            captured[name] = (args[0], output)
        return hook

    device = next(model.parameters()).device
    ids = input_ids.to(device)
    with model_lock(model), torch.enable_grad():
        handles = [named[name].register_forward_hook(keep(name)) for name in modules]
        try:  # a leaf that needs a gradient makes every activation carry one; the weights stay as they are
            embeds = model.get_input_embeddings()(ids).detach().requires_grad_(True)
            logits = model(inputs_embeds=embeds).logits.float()
        finally:
            for handle in handles:
                handle.remove()
        log_p = torch.log_softmax(logits[0, n_prompt - 1:-1], dim=-1)
        loss = -log_p.gather(1, ids[0, n_prompt:, None]).mean()
        deltas = torch.autograd.grad(loss, [captured[name][1] for name in modules])
    pieces = []
    with torch.no_grad():
        for name, delta in zip(modules, deltas):
            x, d = captured[name][0][0], delta[0]  # [T, in], [T, out]
            dtype = torch.promote_types(x.dtype, torch.float32)  # half precision on a GPU: sum in fp32
            x, d = x.to(dtype), d.to(dtype)
            if factors:
                f = factors[name]
                a, b = f.a.to(x.device, dtype), f.b.to(x.device, dtype)
                pieces += [f.scale * (d @ b).T @ x, f.scale * d.T @ (x @ a.T)]
            elif output_axis(named[name]) == 1:  # a weight stored [in, out] (GPT-2's Conv1D)
                pieces.append(x.T @ d)
            else:
                pieces.append(d.T @ x)
        vector = torch.cat([p.reshape(-1) for p in pieces]).cpu()
    return ExampleGradient(vector=vector, loss=loss.item(), target_tokens=length - n_prompt)
