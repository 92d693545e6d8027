"""The read-out end of a decoder and the norms that sit on its residual writes, as linear maps with a frozen scale.

The logit lens reads any residual through the model's own final norm, unembedding and final-logit soft-capping
(`readout_logits`). Direct logit attribution needs each norm split into a scale taken from the full input and a
linear part applied to each piece of that input (TransformerLens' `apply_ln_to_stack`): `NormParts`.
Gemma 3's post-attention / post-feedforward RMSNorms act on the whole block output before the residual add, so a
per-head piece goes through them with the scale of the full attention output (`architecture.post_attention_norm`).

transformers' `hidden_states[-1]` is the final norm's output, not its input: `capture_final_residual` reads the
input (the residual after the last layer) with a pre-hook on the final norm.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

from backend.models.architecture import attention_out_proj, final_norm, mlp_down_proj, norm_gain, weight_out_in
from backend.models.locks import model_lock


@dataclass(frozen=True)
class NormParts:
    """A LayerNorm ("layer": centred, biased) or RMSNorm ("rms") as scale + linear part. gain/bias `[d]` fp32."""

    kind: str
    gain: torch.Tensor
    bias: torch.Tensor | None
    eps: float

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """`[..., 1]`: the denominator the norm divides `x [..., d]` by."""
        x = x.float()
        spread = x.var(dim=-1, unbiased=False, keepdim=True) if self.kind == "layer" else x.pow(2).mean(-1, True)
        return torch.sqrt(spread + self.eps)

    def linear(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        """The norm's linear part on a piece `x [..., d]` of an input whose scale is `scale` (no bias)."""
        x = x.float()
        if self.kind == "layer":
            x = x - x.mean(dim=-1, keepdim=True)  # centring is linear: the pieces' centred parts sum to the whole's
        return x / scale * self.gain

    def offset(self) -> torch.Tensor:
        """The constant the norm adds (its bias; zeros for RMSNorm)."""
        return self.bias if self.bias is not None else torch.zeros_like(self.gain)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x, self.scale(x)) + self.offset()


def norm_parts(norm: nn.Module) -> NormParts:
    if isinstance(norm, nn.LayerNorm):
        return NormParts("layer", norm.weight.detach().float().clone(),
                         None if norm.bias is None else norm.bias.detach().float().clone(), float(norm.eps))
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", 1e-6))
    return NormParts("rms", norm_gain(norm), None, float(eps))


def unembedding(model: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
    """W_U `[vocab, d]` and its bias `[vocab]` or None (fp32 views of the lm_head's own weights)."""
    head = model.get_output_embeddings()
    bias = getattr(head, "bias", None)
    return head.weight.detach().float(), None if bias is None else bias.detach().float()


def softcap(model: nn.Module) -> float | None:
    """Gemma's final-logit soft-capping constant (logits = cap * tanh(logits / cap)), None when the model has none."""
    cap = getattr(model.config, "final_logit_softcapping", None)
    return float(cap) if cap else None


def capped(model: nn.Module, logits: torch.Tensor) -> torch.Tensor:
    cap = softcap(model)
    return logits if cap is None else cap * torch.tanh(logits / cap)


@torch.no_grad()
def readout_logits(model: nn.Module, residual: torch.Tensor, softcapped: bool = True) -> torch.Tensor:
    """What the model would output if `residual [..., d]` were its last residual: final norm, lm_head, soft-cap
    (`softcapped=False`: the logits before it). The model's own modules run here: under its lock."""
    with model_lock(model):
        logits = model.get_output_embeddings()(final_norm(model)(residual)).float()
    return capped(model, logits) if softcapped else logits


def out_proj(model: nn.Module, layer: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """W_O `[d, heads * head_dim]` (columns h*dh:(h+1)*dh are head h's slice) and its bias `[d]` or None."""
    proj = attention_out_proj(model, layer)
    return weight_out_in(proj).detach().float(), None if proj.bias is None else proj.bias.detach().float()


def down_bias(model: nn.Module, layer: int) -> torch.Tensor | None:
    bias = getattr(mlp_down_proj(model, layer), "bias", None)
    return None if bias is None else bias.detach().float()


@contextmanager
def capture_final_residual(model: nn.Module) -> Iterator[list[torch.Tensor]]:
    """Inside: every forward appends the final norm's input `[batch, seq, d]` to the yielded list. Holds the
    model's lock, so no other session's forward is read."""
    captured: list[torch.Tensor] = []
    with model_lock(model):
        handle = final_norm(model).register_forward_pre_hook(lambda module, args: captured.append(args[0].detach()))
        try:
            yield captured
        finally:
            handle.remove()
