"""Contributions of every additive term to every residual state (Ferrando & Voita 2024, "Information flow routes:
automatically interpreting language models at scale"; the proximity measure llm-transparency-tool computes).

A block l (1..L) turns the residual state `pre = x[l-1]_i` into two states:

    mid_i  = pre_i + sum_{h, j<=i} z[h, i, j] + b_O        (after attention; Gemma 3: through its post-norm)
    post_i = mid_i + ffn_i                                  (after the MLP; post_i = x[l]_i)

with z[h, i, j] = A[h, i, j] * v[h, j] W_O[h]^T, the value at source j weighted by head h's attention from i and
written through h's slice of o_proj (Gemma 3: through the post-attention norm's linear part with the scale of the
whole attention output at i, so the terms still add up). For a sum y and its terms t_k the importance is

    imp(t_k) = max(0, ||y||_1 - ||y - t_k||_1),   share(t_k) = imp(t_k) / sum_k imp(t_k)

(a term counts as much as it brings y closer to itself than zero is). The attention sum's terms are the residual
`pre_i` and one term per source j, z_j = sum_h z[h, i, j] (per head: one term per (h, j)); the MLP sum's terms are
`mid_i` and `ffn_i`. Biases stay in the sum and are no term (as in llm-transparency-tool), so the shares at a state
sum to 1 whenever some term is closer to the sum than zero is (otherwise all are 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.models.architecture import arch_info, post_attention_norm
from backend.models.hooks import Capture, capture
from backend.models.readout import capture_final_residual, norm_parts, out_proj
from backend.models.values import capture_middle_residuals, value_states

CHUNK_FLOATS = 2 ** 24  # query positions per step so that a step's terms stay near 64 MB


@dataclass(frozen=True)
class Contributions:
    """Shares, fp32. attn `[L, T, T]` (query i, source j) or per head `[L, T, T, H]`; attn_resid, ffn, ffn_resid
    `[L, T]`. Index l is block l + 1: its attention moves x[l] into mid, its MLP turns mid into x[l + 1]."""

    attn: np.ndarray
    attn_resid: np.ndarray
    ffn: np.ndarray
    ffn_resid: np.ndarray


def shares(whole: torch.Tensor, terms: torch.Tensor) -> torch.Tensor:
    """`[..., n]` shares of terms `[..., n, d]` in their sum `whole [..., d]` by L1 proximity (module docstring)."""
    importance = (whole.abs().sum(-1, keepdim=True) - (whole.unsqueeze(-2) - terms).abs().sum(-1)).clamp_min(0)
    total = importance.sum(-1, keepdim=True)
    return torch.where(total > 0, importance / total.clamp_min(torch.finfo(total.dtype).tiny), 0.0)


@torch.no_grad()
def residual_states(model, ids: torch.Tensor, internals: bool = True) -> tuple[list[torch.Tensor], list[torch.Tensor],
                                                                              Capture]:
    """One forward: (x[0..L] `[T, d]`, mid[0..L-1] `[T, d]`, the capture; with internals, under eager attention and
    reading every head's output)."""
    n_layers = arch_info(model).n_layers
    with capture_final_residual(model) as final, capture_middle_residuals(model) as middle:
        traced = capture(model, ids, heads=range(n_layers) if internals else (), attentions=internals)
    states = [r[0].float() for r in traced.residual[:n_layers]] + [final[-1][0].float()]
    return states, [middle[layer][0].float() for layer in range(n_layers)], traced


@torch.no_grad()
def source_writes(model, traced, states: list[torch.Tensor], layer: int) -> torch.Tensor:
    """`[H, T, d]`: what head h writes per unit of attention to source j, v[kv(h), j] W_O[h]^T (before any
    post-norm)."""
    info = arch_info(model)
    values = value_states(model, layer, states[layer][None])[0]  # [kv_heads, T, dh]
    values = values.repeat_interleave(info.group_size, dim=0)  # query head h reads kv head h // group
    w_o, _ = out_proj(model, layer)
    return torch.einsum("hjk,dhk->hjd", values, w_o.reshape(info.hidden_size, info.n_heads, info.head_dim))


@torch.no_grad()
def attention_shares(model, traced, states, middle, layer: int, modes: tuple[bool, ...]
                     ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per mode (per_head False / True): (source shares `[T, T]` or `[T, T, H]`, residual shares `[T]`) of the
    layer's attention sum at every query."""
    info = arch_info(model)
    writes = source_writes(model, traced, states, layer).transpose(0, 1)  # [T (source), H, d]
    pattern = traced.attentions[layer][0].float().permute(1, 2, 0)  # [Tq, Tk, H]
    post = post_attention_norm(model, layer)
    if post is not None:  # the post-norm's scale is that of the whole attention output at each query
        w_o, b_o = out_proj(model, layer)
        raw = traced.head_outputs[layer][0].float().reshape(pattern.shape[0], -1) @ w_o.T
        raw = raw + (b_o if b_o is not None else 0.0)
    length, d = pattern.shape[0], info.hidden_size
    out = []
    for per_head in modes:
        step = max(1, CHUNK_FLOATS // (length * d * (info.n_heads if per_head else 1)))
        source, resid = [], []
        for first in range(0, length, step):
            rows = slice(first, min(length, first + step))
            if per_head:  # [q, j, h, d]
                terms = pattern[rows, :, :, None] * writes[None]
            else:  # [q, j, d]: for each source j, [q, H] @ [H, d]
                terms = torch.bmm(pattern[rows].transpose(0, 1), writes).transpose(0, 1)
            if post is not None:  # linear once its scale is fixed: the terms still add up to the whole write
                parts = norm_parts(post)
                terms = parts.linear(terms, parts.scale(raw[rows]).reshape((-1,) + (1,) * (terms.dim() - 1)))
            flat = terms.reshape(terms.shape[0], -1, d)
            both = torch.cat([flat, states[layer][rows, None]], dim=1)  # the residual is the last term
            got = shares(middle[layer][rows], both)
            source.append(got[:, :-1].reshape(terms.shape[:-1]))
            resid.append(got[:, -1])
        out.append((torch.cat(source), torch.cat(resid)))
    return out


def _collect(model, traced, states, middle, modes: tuple[bool, ...]) -> list[Contributions]:
    """One Contributions per mode, the layers' values and writes computed once for all modes."""
    attn, attn_resid = [[] for _ in modes], [[] for _ in modes]
    ffn, ffn_resid = [], []
    for layer in range(arch_info(model).n_layers):
        for m, (source, resid) in enumerate(attention_shares(model, traced, states, middle, layer, modes)):
            attn[m].append(source)
            attn_resid[m].append(resid)
        mlp = shares(states[layer + 1], torch.stack([states[layer + 1] - middle[layer], middle[layer]], dim=1))
        ffn.append(mlp[:, 0])
        ffn_resid.append(mlp[:, 1])
    numpy = lambda parts: torch.stack(parts).cpu().numpy().astype(np.float32)  # noqa: E731
    return [Contributions(attn=numpy(attn[m]), attn_resid=numpy(attn_resid[m]), ffn=numpy(ffn),
                          ffn_resid=numpy(ffn_resid)) for m in range(len(modes))]


@torch.no_grad()
def contributions(model, ids: torch.Tensor, per_head: bool = False) -> Contributions:
    """Every state's shares for the prompt `ids [1, T]` (one forward, then arithmetic on what it exposed)."""
    states, middle, traced = residual_states(model, ids)
    return _collect(model, traced, states, middle, (per_head,))[0]


@torch.no_grad()
def contributions_both(model, ids: torch.Tensor) -> tuple[Contributions, Contributions]:
    """(per source, per head) shares from one forward."""
    states, middle, traced = residual_states(model, ids)
    by_source, per_head = _collect(model, traced, states, middle, (False, True))
    return by_source, per_head
