"""Where the parts of a decoder-only model live, per architecture family.

The rest of the backend asks this module for "layer i's attention output projection" or
"layer i's MLP up projection" and never spells transformers' attribute names itself.
Supported: Llama-like (Llama, Mistral, Qwen2, Qwen3, SmolLM, Gemma 3) and GPT-2 (`KNOWN_MODEL_TYPES`). This is the
only backend module that names transformers' module attributes (`self_attn`, `c_attn`, `mlp.down_proj`,
`transformer.h`, ...) or GPT-2's `Conv1D`; tests/models/test_architecture_boundary.py holds every other module to it.

Gemma 3 differs in ways every reader of weights must know, and this module absorbs them: its RMSNorms
scale by (1 + weight) (`norm_gain`), its QK-norm is per head, its rotary embedding has one table per layer
type (sliding / full attention, `rotary_for`), sliding-window layers see only the last `attention_window`
keys, the token embedding is multiplied by sqrt(hidden) inside the embedding module (so residual[0] is
already scaled), q.k is scaled by query_pre_attn_scalar^-0.5 (read from the module's own `scaling`), and
the attention/MLP outputs pass through extra RMSNorms before the residual add (hooks at o_proj see the
pre-norm head outputs).
"""
from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import nn
from transformers.pytorch_utils import Conv1D

from backend.errors import UserError
from backend.models.locks import model_lock

# The model types whose conventions (norms, biases, rotary tables, QK-norm) this module absorbs, each with a tiny
# model in the tests; a reader that must know every convention (the FP8 bound) refuses the others.
KNOWN_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma3_text", "gpt2")


@dataclass(frozen=True)
class ArchInfo:
    """Static shape facts of a model, read from its config."""

    family: str  # "llama" (Llama-like, incl. Qwen2/3, Mistral, Gemma 3) or "gpt2"
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
        return ArchInfo(family="gpt2", model_type="gpt2", n_layers=cfg.n_layer, n_heads=cfg.n_head,
                        n_kv_heads=cfg.n_head, head_dim=cfg.n_embd // cfg.n_head, hidden_size=cfg.n_embd,
                        intermediate_size=cfg.n_inner or 4 * cfg.n_embd, vocab_size=cfg.vocab_size)
    if not hasattr(getattr(model, "model", None), "layers"):
        raise UserError(f"Architecture {cfg.model_type!r} is not supported (expected a Llama-like or GPT-2 decoder).")
    n_heads = cfg.num_attention_heads
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads
    return ArchInfo(family="llama", model_type=cfg.model_type, n_layers=cfg.num_hidden_layers, n_heads=n_heads,
                    n_kv_heads=getattr(cfg, "num_key_value_heads", None) or n_heads, head_dim=head_dim,
                    hidden_size=cfg.hidden_size, intermediate_size=cfg.intermediate_size, vocab_size=cfg.vocab_size)


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    return model.transformer.h if model.config.model_type == "gpt2" else model.model.layers


def layer_linear_modules(model: nn.Module, layers: Iterable[int]) -> tuple[str, ...]:
    """The names (in `model.named_modules()` order) of the linear layers inside the decoder layers `layers` (their
    attention and MLP projections); layers out of range name none."""
    blocks = decoder_layers(model)
    inside = {id(m) for layer in set(layers) if 0 <= layer < len(blocks) for m in blocks[layer].modules()}
    return tuple(name for name, module in model.named_modules() if is_linear(module) and id(module) in inside)


def is_linear(module: nn.Module) -> bool:
    """`nn.Linear`, or GPT-2's `Conv1D` (the same map with its weight stored transposed)."""
    return isinstance(module, (nn.Linear, Conv1D))


def output_axis(module: nn.Module) -> int:
    """The axis of a linear layer's stored weight that indexes its outputs: 0 for `nn.Linear` (`[out, in]`), 1 for
    GPT-2's `Conv1D` (`[in, out]`)."""
    return 1 if isinstance(module, Conv1D) else 0


def weight_out_in(module: nn.Module) -> torch.Tensor:
    """A linear layer's weight as `[out, in]` (a view of the stored weight, transposed for GPT-2's `Conv1D`)."""
    return module.weight.t() if isinstance(module, Conv1D) else module.weight


def final_norm(model: nn.Module) -> nn.Module:
    """The norm between the last layer's residual and the unembedding (`model.norm` / GPT-2 `ln_f`)."""
    return model.transformer.ln_f if model.config.model_type == "gpt2" else model.model.norm


def mlp_module(model: nn.Module, layer: int) -> nn.Module:
    return decoder_layers(model)[layer].mlp


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


def mlp_down_proj(model: nn.Module, layer: int) -> nn.Module:
    """The MLP's output (down) projection, whose input is the gated activation: `down_proj` / GPT-2 `c_proj`."""
    block = decoder_layers(model)[layer]
    return block.mlp.c_proj if model.config.model_type == "gpt2" else block.mlp.down_proj


@dataclass(frozen=True)
class QKWeights:
    """The query/key side of one attention layer (fp32 copies, weights as stored: (out, in)).

    w_q `[n_heads * head_dim, hidden]`, w_k `[n_kv_heads * head_dim, hidden]`, b_q/b_k `[out]` or None.
    norm_*: the layer's input norm ("rms" or "layer"), gain and bias `[hidden]` (bias None for RMSNorm).
    q_norm/k_norm: QK-norm gains (`[head_dim]` per head, or `[heads * head_dim]` over the whole projection), or None.
    rope_scaling: the factor the rotary module multiplies cos/sin by (1 for plain RoPE); scaling: q.k multiplier.
    """

    w_q: torch.Tensor
    w_k: torch.Tensor
    b_q: torch.Tensor | None
    b_k: torch.Tensor | None
    norm_kind: str
    norm_weight: torch.Tensor
    norm_bias: torch.Tensor | None
    norm_eps: float
    q_norm: torch.Tensor | None
    k_norm: torch.Tensor | None
    rope: bool
    rope_scaling: float
    scaling: float


def attention_input_norm(model: nn.Module, layer: int) -> nn.Module:
    """The norm applied to the residual stream before attention (`input_layernorm` / GPT-2 `ln_1`)."""
    block = decoder_layers(model)[layer]
    return block.ln_1 if model.config.model_type == "gpt2" else block.input_layernorm


def mlp_input_norm(model: nn.Module, layer: int) -> nn.Module:
    """The norm applied to the residual stream before the MLP: GPT-2 `ln_2`, Gemma `pre_feedforward_layernorm`
    (its `post_attention_layernorm` normalises the attention output instead), else `post_attention_layernorm`."""
    block = decoder_layers(model)[layer]
    if model.config.model_type == "gpt2":
        return block.ln_2
    return getattr(block, "pre_feedforward_layernorm", None) or block.post_attention_layernorm


def post_attention_norm(model: nn.Module, layer: int) -> nn.Module | None:
    """Gemma 3's norm on the attention output before the residual add (in Llama-like models the module of that
    name is the MLP's input norm: only a block that also has a pre-feedforward norm uses it as a post-norm)."""
    block = decoder_layers(model)[layer]
    return block.post_attention_layernorm if hasattr(block, "pre_feedforward_layernorm") else None


def post_mlp_norm(model: nn.Module, layer: int) -> nn.Module | None:
    """Gemma 3's norm on the MLP output before the residual add; None for models without one."""
    return getattr(decoder_layers(model)[layer], "post_feedforward_layernorm", None)


def _copy(t: torch.Tensor | None) -> torch.Tensor | None:
    return None if t is None else t.detach().float().clone()


def norm_gain(norm: nn.Module) -> torch.Tensor:
    """The effective per-channel gain of an RMSNorm `[dim]` (fp32 copy): Gemma's norms multiply by 1 + weight."""
    weight = norm.weight.detach().float().clone()
    return weight + 1.0 if type(norm).__name__.startswith("Gemma") else weight


def layer_type(model: nn.Module, layer: int) -> str | None:
    """"sliding_attention" / "full_attention" for models that mix them (Gemma 3), else None."""
    types = getattr(model.config, "layer_types", None)
    return types[layer] if types else None


def attention_window(model: nn.Module, layer: int) -> int | None:
    """How many most recent keys (the query's own included) a layer attends to; None = all (causal)."""
    return getattr(attention_module(model, layer), "sliding_window", None)


def rotary_for(model: nn.Module, layer: int) -> tuple[nn.Module | None, dict, float]:
    """(rotary module or None, extra forward kwargs, cos/sin scaling factor) for one layer."""
    rotary = getattr(getattr(model, "model", None), "rotary_emb", None)
    if rotary is None:
        return None, {}, 1.0
    kind = layer_type(model, layer)
    if kind is not None and "layer_type" in inspect.signature(rotary.forward).parameters:  # one table per layer type
        return rotary, {"layer_type": kind}, float(getattr(rotary, f"{kind}_attention_scaling", 1.0) or 1.0)
    return rotary, {}, float(getattr(rotary, "attention_scaling", 1.0) or 1.0)


def attention_qk_weights(model: nn.Module, layer: int) -> QKWeights:
    attn, norm = attention_module(model, layer), attention_input_norm(model, layer)
    if model.config.model_type == "gpt2":  # Conv1D stores (in, out): transpose, then split q | k | v
        w, b, d = attn.c_attn.weight.detach().float().T, attn.c_attn.bias, model.config.n_embd
        return QKWeights(w_q=w[:d].clone(), w_k=w[d:2 * d].clone(), b_q=_copy(b[:d]), b_k=_copy(b[d:2 * d]),
                         norm_kind="layer", norm_weight=_copy(norm.weight), norm_bias=_copy(norm.bias),
                         norm_eps=float(norm.eps), q_norm=None, k_norm=None, rope=False, rope_scaling=1.0,
                         scaling=float(attn.scaling))
    q_norm, k_norm = getattr(attn, "q_norm", None), getattr(attn, "k_norm", None)
    rotary, _, rope_scaling = rotary_for(model, layer)
    return QKWeights(w_q=_copy(attn.q_proj.weight), w_k=_copy(attn.k_proj.weight), b_q=_copy(attn.q_proj.bias),
                     b_k=_copy(attn.k_proj.bias), norm_kind="rms", norm_weight=norm_gain(norm), norm_bias=None,
                     norm_eps=float(getattr(norm, "variance_epsilon", getattr(norm, "eps", 1e-6))),
                     q_norm=None if q_norm is None else norm_gain(q_norm),
                     k_norm=None if k_norm is None else norm_gain(k_norm), rope=rotary is not None,
                     rope_scaling=rope_scaling, scaling=float(attn.scaling))


def value_projection(model: nn.Module, layer: int, normed: torch.Tensor) -> torch.Tensor:
    """The value projection of a layer's normed input `[batch, seq, hidden]`: `[batch, seq, kv_heads * head_dim]`
    (GPT-2: the value third of its fused `c_attn`). Runs the model's own modules: the caller holds its lock."""
    attn = attention_module(model, layer)
    if model.config.model_type == "gpt2":
        return attn.c_attn(normed)[..., 2 * model.config.n_embd:]
    return attn.v_proj(normed)


@torch.no_grad()
def attention_qk_states(model: nn.Module, layer: int, residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries `[batch, heads, seq, head_dim]` and keys `[batch, kv_heads, seq, head_dim]` of a layer, computed with
    the model's own modules (input norm, projections, QK-norm, rotary) from the layer's input `[batch, seq, hidden]`.
    Keys are not expanded to the query heads; positions are 0..seq-1 (no padding)."""
    with model_lock(model):  # the model's own modules run here: under its lock, like every forward
        return _qk_states(model, layer, residual)


def _qk_states(model: nn.Module, layer: int, residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    import sys

    attn, info = attention_module(model, layer), arch_info(model)
    h = attention_input_norm(model, layer)(residual)
    if model.config.model_type == "gpt2":
        q, k, _ = attn.c_attn(h).split(info.hidden_size, dim=2)
        return (q.view(*h.shape[:2], -1, info.head_dim).transpose(1, 2),
                k.view(*h.shape[:2], -1, info.head_dim).transpose(1, 2))
    q = attn.q_proj(h).view(*h.shape[:2], -1, info.head_dim)
    k = attn.k_proj(h).view(*h.shape[:2], -1, info.head_dim)
    if getattr(attn, "q_norm", None) is not None:
        q, k = attn.q_norm(q), attn.k_norm(k)
    q, k = q.transpose(1, 2), k.transpose(1, 2)
    rotary, kwargs, _ = rotary_for(model, layer)
    if rotary is not None:
        positions = torch.arange(h.shape[1], device=h.device).unsqueeze(0).expand(h.shape[0], -1)
        cos, sin = rotary(h, positions, **kwargs)
        q, k = sys.modules[type(attn).__module__].apply_rotary_pos_emb(q, k, cos, sin)
    return q, k
