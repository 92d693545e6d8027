"""The final residual at one position split into what wrote it: embedding, each head, each MLP, and the biases.

    final residual = embed + sum_{l,h} head[l, h] + sum_l mlp[l] + biases          (exact, to float rounding)

head[l, h] = z[l, h] @ W_O[:, h]^T, z being the head's output as it enters o_proj (backend.models.hooks). Gemma 3
normalises the whole attention output `a = sum_h z_h W_O_h^T + b_O` (and the whole MLP output) with an RMSNorm
before the residual add; that norm is linear once its scale is fixed, so each head goes through it with the scale
of the full `a` (the same for the MLP and its bias). The biases term gathers o_proj/c_proj biases, MLP output
biases, the final norm's bias and the lm_head bias, each through the norm it passes.

`direct(direction)` then takes every part through the final norm with the scale of the full final residual
(TransformerLens' `apply_ln_to_stack`) and onto a vocabulary direction (W_U[target] - W_U[contrast]), so the parts
sum to that logit difference before soft-capping.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.models.architecture import (arch_info, final_norm, mlp_input_norm, mlp_module, post_attention_norm,
                                         post_mlp_norm)
from backend.models.hooks import Capture, capture
from backend.models.locks import model_lock
from backend.models.readout import NormParts, capture_final_residual, down_bias, norm_parts, out_proj, unembedding


@dataclass(frozen=True)
class Decomposition:
    """Residual writes at one position, fp32. embed `[d]`, heads `[L, H, d]`, mlps `[L, d]`, biases `[d]`
    (before the final norm), final `[d]` (the final norm's input), final_norm: its scale and linear part."""

    embed: torch.Tensor
    heads: torch.Tensor
    mlps: torch.Tensor
    biases: torch.Tensor
    final: torch.Tensor
    final_norm: NormParts

    def through_final_norm(self, x: torch.Tensor) -> torch.Tensor:
        """A piece (or stack of pieces) `[..., d]` of the final residual through the final norm's linear part."""
        return self.final_norm.linear(x, self.final_norm.scale(self.final))

    def direct(self, direction: torch.Tensor, direction_bias: float = 0.0) -> dict:
        """Each part's contribution to `direction . final_norm(final) + direction_bias` (floats and tensors)."""
        on = lambda x: self.through_final_norm(x) @ direction  # noqa: E731
        biases = float(on(self.biases)) + float(self.final_norm.offset() @ direction) + direction_bias
        return {"embed": float(on(self.embed)), "heads": on(self.heads), "mlps": on(self.mlps), "biases": biases}


def _through(norm, piece: torch.Tensor, whole: torch.Tensor) -> torch.Tensor:
    """`piece` through a post-norm whose input is `whole` (identity when there is no post-norm)."""
    if norm is None:
        return piece
    parts = norm_parts(norm)
    return parts.linear(piece, parts.scale(whole))


@torch.no_grad()
def run(model, ids: torch.Tensor, pattern_layers: tuple[int, ...] = ()) -> tuple[Capture, torch.Tensor]:
    """One forward reading every head's output (and the attention patterns of `pattern_layers`): the trace and the
    final residual `[1, T, d]`."""
    layers = range(arch_info(model).n_layers)
    with capture_final_residual(model) as captured:
        traced = capture(model, ids, heads=layers, pattern_layers=pattern_layers)
    return traced, captured[-1].float()


@torch.no_grad()
def decompose(model, traced: Capture, final: torch.Tensor, position: int) -> Decomposition:
    info = arch_info(model)
    residual = [r[0, position].float() for r in traced.residual[:info.n_layers]] + [final[0, position]]
    zeros = lambda *shape: torch.zeros(*shape, device=final.device)  # noqa: E731
    heads = zeros(info.n_layers, info.n_heads, info.hidden_size)
    mlps, biases = zeros(info.n_layers, info.hidden_size), zeros(info.hidden_size)
    for layer in range(info.n_layers):
        w_o, b_o = out_proj(model, layer)
        z = traced.head_outputs[layer][0, position].float()  # [H, dh]
        writes = torch.einsum("dhk,hk->hd", w_o.reshape(info.hidden_size, info.n_heads, -1), z)
        b_o = zeros(info.hidden_size) if b_o is None else b_o
        raw = writes.sum(0) + b_o
        post = post_attention_norm(model, layer)
        heads[layer] = _through(post, writes, raw)
        attn_bias = _through(post, b_o, raw) + (norm_parts(post).offset() if post is not None else 0.0)
        biases += attn_bias
        middle = residual[layer] + heads[layer].sum(0) + attn_bias  # the residual between attention and MLP
        b_mlp = down_bias(model, layer)
        b_mlp = zeros(info.hidden_size) if b_mlp is None else b_mlp
        post = post_mlp_norm(model, layer)
        if post is None:  # the MLP's write is the residual's change after attention
            mlps[layer] = residual[layer + 1] - middle - b_mlp
            biases += b_mlp
        else:  # its raw output (for the post-norm's scale) from the model's own modules
            with model_lock(model):  # the model's own modules run here
                out = mlp_module(model, layer)(mlp_input_norm(model, layer)(middle[None, None]))[0, 0].float()
            mlps[layer] = _through(post, out - b_mlp, out)
            biases += _through(post, b_mlp, out) + norm_parts(post).offset()
    return Decomposition(embed=residual[0], heads=heads, mlps=mlps, biases=biases, final=residual[-1],
                         final_norm=norm_parts(final_norm(model)))


def direction_of(model, target: int, contrast: int | None) -> tuple[torch.Tensor, float]:
    """The unembedding direction W_U[target] (- W_U[contrast]) and its lm_head bias difference."""
    w_u, b_u = unembedding(model)
    direction = w_u[target] - (w_u[contrast] if contrast is not None else 0.0)
    bias = 0.0 if b_u is None else float(b_u[target] - (b_u[contrast] if contrast is not None else 0.0))
    return direction, bias
