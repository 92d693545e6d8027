"""Reduced-precision copies of a causal LM, for generation only: weight-only int8, or bf16 weights.

Naive dynamic int8 (`quantize_dynamic`: weights *and* activations rounded to int8 per tensor) loses
the argmax at the first token on SmolLM2: the activations entering `down_proj` carry outliers a single
per-tensor scale cannot hold. Here only the weights are rounded, one scale per output channel, and the
activations enter the matmul in bf16 (`_weight_int8pack_mm`, PyTorch's int8-weight kernel, which reads
a quarter of the bytes of fp32). The residual stream, the norms and the embeddings stay in the model's
dtype; `lm_head` stays too unless asked (a draft model rounds it as well: its guesses are checked).

`bf16` keeps the same tensors in fp32 and stores the Linear weights in bf16 instead (half the bytes; the
matmul runs in bf16 where the CPU has the instructions, avx512_bf16 or AMX).

`packed` rounds nothing: the fp32 Linear weights are also held in MKL's packed layout for the decoder's number of
rows, which a several-row step multiplies faster (`PackedLinear`); the same distribution, sums in another order.

A copy shares every tensor it does not round with the reference model (no second fp32 copy) and is
cached per model and kind. Interpretability features never see it: hooks, patching, attribution and the lens
run on the reference model in its own precision.
"""
from __future__ import annotations

import copy
import threading
import weakref

import torch
from torch import nn

from backend.models.architecture import is_linear, weight_out_in


class Int8Linear(nn.Module):
    """`nn.Linear` with its weight rounded to int8, one fp scale per output row (max |w| / 127)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__()
        weight = weight.detach().float()
        scale = weight.abs().amax(dim=1).clamp(min=1e-12) / 127.0
        self.register_buffer("weight_int8", torch.round(weight / scale[:, None]).clamp(-127, 127)
                             .to(torch.int8).contiguous())
        self.register_buffer("scale", scale.to(torch.bfloat16).contiguous())
        self.bias = bias  # shared, not rounded
        self.out_features, self.in_features = weight.shape

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, self.in_features).to(torch.bfloat16)
        y = torch.ops.aten._weight_int8pack_mm(flat, self.weight_int8, self.scale)
        y = y.to(x.dtype).reshape(*x.shape[:-1], self.out_features)
        return y if self.bias is None else y + self.bias


class Bf16Linear(nn.Module):
    """`nn.Linear` with its weight stored in bf16; input and output keep the caller's dtype."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__()
        self.register_buffer("weight_bf16", weight.detach().to(torch.bfloat16).contiguous())
        self.bias = bias
        self.out_features, self.in_features = weight.shape

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.linear(x.to(torch.bfloat16), self.weight_bf16).to(x.dtype)
        return y if self.bias is None else y + self.bias


class PackedLinear(nn.Module):
    """An fp32 `nn.Linear` whose weight is also held in MKL's packed layout for one number of rows; other row counts
    (a prefill) take `F.linear`. The sums run in another order, so the numbers differ from the reference in the
    last bits: the same distribution, and seeded tokens that can differ where two candidates are that close.
    - 1 row: a reduced copy's fp32 head, a matrix-vector product bound by reading the weight, which the packed
      layout reads about 1.4x faster.
    - N rows (the `packed` copy: a batch's decode step, N rows of one token each): a plain product over a few rows
      repacks the whole weight on every call, so at 8 rows the packed one is about 2x faster per matrix and an
      8-row SmolLM2 step about 1.25x (bench/speed_vs_generate.py)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, rows: int):
        super().__init__()
        self.weight, self.bias, self.rows = weight, bias, rows  # shared with the reference model
        self.register_buffer("packed", torch.ops.mkl._mkl_reorder_linear_weight(weight.detach().contiguous(), rows))

    @staticmethod
    def available(weight: torch.Tensor) -> bool:
        return torch._C.has_mkl and weight.device.type == "cpu" and weight.dtype == torch.float32

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32 or x.shape[:-1].numel() != self.rows:
            return nn.functional.linear(x, self.weight, self.bias)
        y = torch.ops.mkl._mkl_linear(x.reshape(self.rows, -1), self.packed, self.weight, self.bias, self.rows)
        return y.reshape(*x.shape[:-1], y.shape[-1])


PRECISIONS = ("reference", "int8", "bf16", "packed")
_LINEAR = {"int8": Int8Linear, "bf16": Bf16Linear}


def packs(model: nn.Module, rows: int) -> bool:
    """Whether a `packed` copy pays for `model` at `rows` rows: MKL, fp32 weights on the CPU, and more than one row
    (at one row the body's products gained nothing from packing, so the copy would only change the last bits)."""
    return rows > 1 and PackedLinear.available(next(model.parameters()))


def supported(model: nn.Module) -> bool:
    """The int8-weight kernel exists for CPU (and CUDA); other devices keep the reference weights."""
    return next(model.parameters()).device.type in ("cpu", "cuda")


def _linear_parts(module: nn.Module) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """(weight `[out, in]`, bias) of a linear layer (`architecture.is_linear`), else None."""
    return (weight_out_in(module), module.bias) if is_linear(module) else None


def _rounded_copy(model: nn.Module, precision: str, round_head: bool, rows: int = 1) -> nn.Module:
    """A module tree like `model` whose Linear layers (lm_head only if round_head) are rounded to `precision`
    (`packed`: every Linear packed for `rows` rows); every other tensor is shared with `model`, and the copy carries
    none of `model`'s hooks."""
    shared = {id(t): t for t in [*model.parameters(), *model.buffers()]}
    for config in (model.config, getattr(model, "generation_config", None)):  # one config: the copy reads the same
        if config is not None:
            shared[id(config)] = config
    clone = copy.deepcopy(model, memo=shared)
    head = clone.get_output_embeddings()
    for module in clone.modules():
        module._forward_hooks.clear()
        module._forward_pre_hooks.clear()
        for name, child in list(module.named_children()):
            parts = _linear_parts(child)
            if parts is not None and precision == "packed":
                setattr(module, name, PackedLinear(*parts, rows))
            elif parts is not None and (child is not head or round_head):
                setattr(module, name, _LINEAR[precision](*parts))
            elif child is head and parts is not None and PackedLinear.available(parts[0]):
                setattr(module, name, PackedLinear(*parts, 1))
    return clone.eval()


_copies: "weakref.WeakKeyDictionary[nn.Module, dict[tuple[str, bool], nn.Module]]" = weakref.WeakKeyDictionary()
_packed: "weakref.WeakKeyDictionary[nn.Module, tuple[int, nn.Module]]" = weakref.WeakKeyDictionary()  # rows, copy
_guard = threading.Lock()


def reduced_copy(model: nn.Module, precision: str, round_head: bool = False, rows: int = 1) -> nn.Module:
    """`model` itself for "reference" (and for "packed" where it does not pay: `packs`); else its reduced-precision
    copy, built once per model and kind and kept as long as the model is. A packed copy is for a decoder of `rows`
    rows: one is kept per model (a copy for other rows replaces it, as each holds a second copy of the weights)."""
    if precision == "reference" or (precision == "packed" and not packs(model, rows)):
        return model
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    with _guard:
        if precision == "packed":
            if _packed.get(model, (0, None))[0] != rows:
                _packed.pop(model, None)  # the old packing's memory goes before the new one is made
                _packed[model] = rows, _rounded_copy(model, precision, False, rows)
            return _packed[model][1]
        kinds = _copies.setdefault(model, {})
        if (precision, round_head) not in kinds:
            kinds[precision, round_head] = _rounded_copy(model, precision, round_head, rows)
        return kinds[precision, round_head]
