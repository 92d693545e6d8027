"""What one MLP neuron writes, read from the weights: its down-projection column and that direction's effect on
the logits (the "logit effects" of a neuron page).

A neuron's write is `a * column` (a = its gated activation, the down projection's input). The direction goes
through the norms on its way to the logits with their gains only: Gemma 3's post-feedforward RMSNorm and the final
norm divide by a positive scale that depends on the whole residual, which no single neuron fixes, so the effects
are logits per unit activation up to a positive factor: their order and signs are exact. A LayerNorm (GPT-2)
also centres the direction (linear); biases are constants, not the neuron's.
"""
from __future__ import annotations

import torch
from torch import nn

from backend.models.architecture import arch_info, mlp_down_proj
from backend.models.readout import final_norm, norm_parts, post_mlp_norm, unembedding


def down_column(model: nn.Module, layer: int, neuron: int) -> torch.Tensor:
    """`[hidden]` fp32: the down projection's column for intermediate neuron `neuron` (GPT-2's Conv1D: a row)."""
    weight = mlp_down_proj(model, layer).weight.detach().float()
    return weight[neuron] if model.config.model_type == "gpt2" else weight[:, neuron]


def _gain_only(norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
    parts = norm_parts(norm)
    return parts.linear(x, torch.ones(1, device=x.device))  # unit scale: the positive factor left out


@torch.no_grad()
def neuron_logit_effects(model: nn.Module, layer: int, neuron: int) -> torch.Tensor:
    """`[vocab]` the column's direct effect on every logit per unit activation (up to a positive factor)."""
    info = arch_info(model)
    if not 0 <= layer < info.n_layers or not 0 <= neuron < info.intermediate_size:
        raise IndexError((layer, neuron))
    x = down_column(model, layer, neuron)
    post = post_mlp_norm(model, layer)
    if post is not None:
        x = _gain_only(post, x)
    w_u, _ = unembedding(model)
    return w_u @ _gain_only(final_norm(model), x)
