"""Value vectors of one attention layer and the residual between a layer's attention and its MLP: what a
per-source-position decomposition of attention (Ferrando & Voita's information flow routes) reads."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from backend.models.architecture import arch_info, attention_input_norm, mlp_input_norm, value_projection
from backend.models.locks import model_lock


@torch.no_grad()
def value_states(model: nn.Module, layer: int, residual: torch.Tensor) -> torch.Tensor:
    """Values `[batch, kv_heads, seq, head_dim]` of a layer from its input residual `[batch, seq, hidden]`, computed
    with the model's own modules (input norm, value projection incl. its bias)."""
    info = arch_info(model)
    with model_lock(model):  # the model's own modules run here
        h = attention_input_norm(model, layer)(residual)
        v = value_projection(model, layer, h)
    return v.view(*h.shape[:2], -1, info.head_dim).transpose(1, 2).float()


@contextmanager
def capture_middle_residuals(model: nn.Module) -> Iterator[dict[int, torch.Tensor]]:
    """Inside: a forward fills the yielded dict with each layer's residual after attention, before the MLP
    (`[batch, seq, hidden]`, the MLP input norm's input). Holds the model's lock."""
    captured: dict[int, torch.Tensor] = {}
    with model_lock(model):
        handles = [mlp_input_norm(model, layer).register_forward_pre_hook(
            lambda module, args, layer=layer: captured.__setitem__(layer, args[0].detach()))
            for layer in range(arch_info(model).n_layers)]
        try:
            yield captured
        finally:
            for handle in handles:
                handle.remove()
