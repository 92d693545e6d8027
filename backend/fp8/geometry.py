"""From a layer's weights to the factors whose interaction bounds its attention logits.

For a Llama-like layer the attention input is h = diag(g) u with u = x / rms(x), so ||u|| <= sqrt(d)
(LayerNorm: u = (x - mean) / std, same bound; plus a bias beta). Folding the gain into the projections,
q_h = A_h u + c_h with A_h = W_Q,h diag(g) `[r, d]` and c_h = W_Q,h beta + b_Q,h. A constant term is
absorbed by augmenting: A~ = [A | c], u~ = [u; 1], ||u~||^2 <= d + 1 (only when a bias or norm bias exists).
Then |S_ij| = scaling * |u~_i^T A~_h^T R_(j-i) B~_g u~_j| <= scaling * n2 * sigma, with n2 the squared
input-norm bound and R the RoPE rotation (identity without RoPE; see bounds.py for the rotation-safe form).

QK-norm (per-head RMSNorm on q and k, Qwen3 and Gemma 3, whose gains are 1 + weight) renormalises q and k after the projections, so the bound comes
from its gains: ||q^|| <= sqrt(r) max|g_q|; a norm over the whole projection (OLMo2-style) is refused.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from backend.errors import UserError
from backend.models.architecture import KNOWN_MODEL_TYPES, QKWeights, arch_info, attention_qk_weights


@dataclass(frozen=True)
class LayerFactors:
    """Folded query/key factors of one layer. a `[kv, group, r, d']`, b `[kv, r, d']` (d' = d or d + 1).

    n2: bound on ||u~||^2 (d, or d + 1 when augmented). logit_scale: scaling * rope_scaling^2, what
    multiplies the bilinear form. qk_gain_*: QK-norm bound factors per head (None without QK-norm).
    """

    a: torch.Tensor
    b: torch.Tensor
    n2: float
    logit_scale: float
    augmented: bool
    rope: bool
    qk_gain_rank_aware: torch.Tensor | None  # [heads]: r * max_i |g_q,i g_k,i|
    qk_gain_rotation_safe: torch.Tensor | None  # [heads]: r * max|g_q| * max|g_k|


def check_supported(model: nn.Module) -> None:
    model_type = model.config.model_type
    if model_type not in KNOWN_MODEL_TYPES:  # the bound reads every norm, bias and rotary convention
        raise UserError(f"FP8 attention bounds support {', '.join(KNOWN_MODEL_TYPES)} models; "
                        f"{model_type!r} has norm/rotary conventions the bound has not been checked against.")


def _constant(w: torch.Tensor, beta: torch.Tensor | None, bias: torch.Tensor | None) -> torch.Tensor | None:
    if beta is None and bias is None:
        return None
    out = torch.zeros(w.shape[0])
    if beta is not None:
        out += w @ beta
    if bias is not None:
        out += bias
    return out


def _qk_norm_factors(qk: QKWeights, n_heads: int, group: int, r: int
                     ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    if qk.q_norm is None and qk.k_norm is None:
        return None, None
    if qk.q_norm is None or qk.k_norm is None or qk.q_norm.numel() != r or qk.k_norm.numel() != r:
        raise UserError("This model normalises queries/keys over the whole projection (or only one of them); "
                        "only per-head QK-norm (as in Qwen3) is supported by the FP8 bound.")
    gq, gk = qk.q_norm.abs(), qk.k_norm.abs()
    return (torch.full((n_heads,), float(r * (gq * gk).max())),
            torch.full((n_heads,), float(r * gq.max() * gk.max())))


def layer_factors(model: nn.Module, layer: int) -> LayerFactors:
    info = arch_info(model)
    qk = attention_qk_weights(model, layer)
    if qk.norm_kind not in ("rms", "layer"):
        raise UserError(f"Unknown attention input norm {qk.norm_kind!r}.")
    gain = qk.norm_weight if qk.norm_weight is not None else torch.ones(info.hidden_size)
    a, b = qk.w_q * gain, qk.w_k * gain  # W diag(g): scale the input columns
    c_q, c_k = _constant(qk.w_q, qk.norm_bias, qk.b_q), _constant(qk.w_k, qk.norm_bias, qk.b_k)
    augmented = c_q is not None or c_k is not None
    if augmented:
        a = torch.cat([a, (c_q if c_q is not None else torch.zeros(a.shape[0]))[:, None]], dim=1)
        b = torch.cat([b, (c_k if c_k is not None else torch.zeros(b.shape[0]))[:, None]], dim=1)
    r, kv, group = info.head_dim, info.n_kv_heads, info.group_size
    aware, safe = _qk_norm_factors(qk, info.n_heads, group, r)
    return LayerFactors(a=a.reshape(kv, group, r, -1), b=b.reshape(kv, r, -1),
                        n2=float(info.hidden_size + (1 if augmented else 0)),
                        logit_scale=qk.scaling * qk.rope_scaling ** 2, augmented=augmented, rope=qk.rope,
                        qk_gain_rank_aware=aware, qk_gain_rotation_safe=safe)


def model_factors(model: nn.Module) -> list[LayerFactors]:
    check_supported(model)
    return [layer_factors(model, layer) for layer in range(arch_info(model).n_layers)]
