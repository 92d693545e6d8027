"""What one MLP neuron writes, read from the weights: its down-projection column and that direction's effect on
the logits (the "logit effects" of a neuron page).

A neuron's write is `a * column` (a = its gated activation, the down projection's input). The direction goes
through the norms on its way to the logits with their gains only: Gemma 3's post-feedforward RMSNorm and the final
norm divide by a positive scale that depends on the whole residual, which no single neuron fixes, so the effects
are logits per unit activation up to a positive factor: their order and signs are exact. A LayerNorm (GPT-2)
also centres the direction (linear); biases are constants, not the neuron's.

`mlp_up_columns` reads chosen neurons' up-projection outputs of one or several layers and stops the forward right
after the deepest: later layers cannot change them, so neurons up to layer l cost l + 1 layers of compute, not all
of them, and a graph's neurons cost one forward, not one each.
"""
from __future__ import annotations

import torch
from torch import nn

from backend.models.architecture import arch_info, final_norm, mlp_down_proj, mlp_up_proj, post_mlp_norm, weight_out_in
from backend.models.locks import model_lock
from backend.models.readout import norm_parts, unembedding
from backend.models.rules import forward_logits


def down_column(model: nn.Module, layer: int, neuron: int) -> torch.Tensor:
    """`[hidden]` fp32: the down projection's column for intermediate neuron `neuron`."""
    return weight_out_in(mlp_down_proj(model, layer)).detach().float()[:, neuron]


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


class _Reached(Exception):
    """Raised by the reading hook to end the forward at the layer read."""


@torch.no_grad()
def mlp_up_columns(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                   columns: dict[int, list[int]]) -> dict[int, torch.Tensor]:
    """layer -> `[batch, seq, len(columns[layer])]` the up projection's output of those neurons, from one forward
    stopped right after the deepest layer asked for (only the columns are kept: a graph's neurons, not L widths)."""
    captured: dict[int, torch.Tensor] = {}
    last = max(columns)

    def reader(layer: int):
        index = torch.tensor(columns[layer], dtype=torch.long)

        def hook(module, args, output):
            captured[layer] = output.detach()[..., index.to(output.device)]
            if layer == last:
                raise _Reached
        return hook

    with model_lock(model):
        handles = [mlp_up_proj(model, layer).register_forward_hook(reader(layer)) for layer in columns]
        try:
            forward_logits(model, input_ids, attention_mask, logits_to_keep=1)
        except _Reached:
            pass
        finally:
            for handle in handles:
                handle.remove()
    return captured
