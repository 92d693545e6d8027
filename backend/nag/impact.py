"""Neuron impact: one score per (layer, MLP intermediate neuron) for each document of a batch.

Every method takes right-padded `input_ids [B, T]` with `attention_mask [B, T]` (1 = real token) and
returns `[B, L, I]` (L layers, I intermediate neurons), averaged over the real tokens only. Right
padding keeps every real token at its unpadded position (causal attention never looks right), so a
document's impact does not depend on what it was batched with.

Registry (`IMPACTS`; tests/nag/test_contracts.py holds every registered method to the contract above):
- `up_abs` (default, the paper's): mean |up_proj(norm(x))|, read through `backend.models.hooks`.
- `gated_abs`: mean |act(gate(x)) * up(x)|, the down projection's input (GPT-2: gelu(c_fc(x))), via captum.
- `act_x_grad`: mean |a * d log p(doc) / d a| for a = up_proj output, captum's LayerGradientXActivation.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from backend.models.architecture import arch_info, mlp_down_proj, mlp_up_proj
from backend.models.hooks import Hooks
from backend.models.locks import model_lock
from backend.models.rules import forward_logits
from backend.variants import Registry, Variant


def masked_mean_abs(acts: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """`[B, T, I]` activations -> `[B, I]` mean of |a| over the positions where mask is 1."""
    weights = mask.to(acts.dtype).unsqueeze(-1)
    return (acts.abs() * weights).sum(1) / weights.sum(1).clamp_min(1.0)


@torch.no_grad()
def up_abs(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    layers = range(arch_info(model).n_layers)
    with Hooks(model, read_mlp_up=layers) as hooks:
        forward_logits(model, input_ids, attention_mask, logits_to_keep=1)  # no full-vocab logits
    ups = hooks.mlp_up
    return torch.stack([masked_mean_abs(ups[layer].float(), attention_mask) for layer in layers], dim=1)


@torch.no_grad()
def gated_abs(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    from captum.attr import LayerActivation

    layers = [mlp_down_proj(model, layer) for layer in range(arch_info(model).n_layers)]

    def forward(ids, mask):
        return forward_logits(model, ids, mask, logits_to_keep=1)[:, -1]

    with model_lock(model):
        acts = LayerActivation(forward, layers).attribute(input_ids, additional_forward_args=(attention_mask,),
                                                          attribute_to_layer_input=True)
    return torch.stack([masked_mean_abs(a.float(), attention_mask) for a in acts], dim=1)


def act_x_grad(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    from captum.attr import LayerGradientXActivation

    layers = [mlp_up_proj(model, layer) for layer in range(arch_info(model).n_layers)]

    def log_likelihood(ids, mask):
        """`[B]` sum of log p(token | prefix) over the document's real next-token pairs."""
        logp = torch.log_softmax(forward_logits(model, ids, mask)[:, :-1], dim=-1)
        picked = logp.gather(-1, ids[:, 1:, None]).squeeze(-1)
        return (picked * mask[:, 1:].to(picked.dtype)).sum(1)

    with model_lock(model), torch.enable_grad():
        attrs = LayerGradientXActivation(log_likelihood, layers).attribute(
            input_ids, additional_forward_args=(attention_mask,))
    return torch.stack([masked_mean_abs(a.detach().float(), attention_mask) for a in attrs], dim=1)


@dataclass(frozen=True)
class ImpactMethod(Variant):
    """`run(model, input_ids [B, T], attention_mask [B, T]) -> [B, L, I]`, non-negative."""

    cost: int = 1  # relative memory/time per token: batches are shrunk by this factor


IMPACTS: Registry[ImpactMethod] = Registry("nag-impacts", "neuron impact")
IMPACTS.register(ImpactMethod(
    "up_abs", "|up_proj| (paper)", "Mean absolute up-projection output over tokens (no gate, no activation, no "
    "gradient), read with the project's hooks", up_abs))
IMPACTS.register(ImpactMethod(
    "gated_abs", "|gated activation|", "Mean absolute gated MLP activation act(gate(x))*up(x) (GPT-2: "
    "gelu(c_fc(x))), the input of the down projection (captum LayerActivation)", gated_abs))
IMPACTS.register(ImpactMethod(
    "act_x_grad", "activation × gradient", "Mean |up_proj output × gradient of the document's log-likelihood| "
    "(captum LayerGradientXActivation); needs a backward pass", act_x_grad, cost=4))
