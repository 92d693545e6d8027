"""Where the parts of a decoder-only model live, per architecture family.

The rest of the backend asks this module for "layer i's attention output projection" or
"layer i's MLP up projection" and never spells transformers' attribute names itself.
Supported: Llama-like (Llama, Mistral, Qwen2, Qwen3, Gemma, SmolLM) and GPT-2.
"""
from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from backend.errors import UserError


@dataclass(frozen=True)
class ArchInfo:
    """Static shape facts of a model, read from its config."""

    family: str  # "llama" (Llama-like, incl. Qwen2/3, Mistral, Gemma) or "gpt2"
    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    hidden_size: int
    intermediate_size: int
    vocab_size: int

    @property
    def group_size(self) -> int:
        """Query heads per key/value head (grouped-query attention); 1 for plain multi-head."""
        return self.n_heads // self.n_kv_heads


def arch_info(model: nn.Module) -> ArchInfo:
    cfg = model.config
    if cfg.model_type == "gpt2":
        return ArchInfo("gpt2", "gpt2", cfg.n_layer, cfg.n_head, cfg.n_head, cfg.n_embd // cfg.n_head,
                        cfg.n_embd, cfg.n_inner or 4 * cfg.n_embd, cfg.vocab_size)
    if not hasattr(getattr(model, "model", None), "layers"):
        raise UserError(f"Architecture {cfg.model_type!r} is not supported (expected a Llama-like or GPT-2 decoder).")
    n_heads = cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads
    return ArchInfo("llama", cfg.model_type, cfg.num_hidden_layers, n_heads,
                    getattr(cfg, "num_key_value_heads", None) or n_heads, head_dim,
                    cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size)


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    return model.transformer.h if model.config.model_type == "gpt2" else model.model.layers


def attention_module(model: nn.Module, layer: int) -> nn.Module:
    block = decoder_layers(model)[layer]
    return block.attn if model.config.model_type == "gpt2" else block.self_attn


def attention_out_proj(model: nn.Module, layer: int) -> nn.Module:
    """The projection whose input is the concatenation of per-head outputs, [.., heads * head_dim]."""
    attn = attention_module(model, layer)
    return attn.c_proj if model.config.model_type == "gpt2" else attn.o_proj


def mlp_up_proj(model: nn.Module, layer: int) -> nn.Module:
    """The MLP's first (up) projection: `up_proj` for Llama-like models, `c_fc` for GPT-2."""
    block = decoder_layers(model)[layer]
    return block.mlp.c_fc if model.config.model_type == "gpt2" else block.mlp.up_proj
