"""A trial weight-only int8 matrix product built for this CPU (bench/int8_linear.cpp), for issue 57 §4's record of
what was tried. Bench-only: the app's int8 copy keeps PyTorch's `_weight_int8pack_mm` (backend/models/reduced.py),
and nothing under backend/ or app/ imports this module.

PyTorch's op is far from the memory bandwidth at one to eight rows and slower per row the more rows it gets
(bench/int8_matmul.py). The C++ kernel widens each int8 weight row to fp32 once per block of four input rows and
multiplies in fp32 (AVX-512), with the next weight tiles prefetched: faster than PyTorch's op at one row and about
twice as fast at eight (docs/RESULTS.md, "The int8 copy's matrix product"). It was not shipped: it needs a C++
compiler and ninja at run time, compiles for 30-60 s on first use, and its numbers differ from the op's in the last
bits while the verbs' cache keys do not say which kernel ran.

`kernel()` compiles it once per machine (torch's cpp_extension, cached under TORCH_EXTENSIONS_DIR), or returns None
where the CPU lacks AVX-512 or the build fails. `NativeInt8Linear` is the int8 copy's Linear on it, and
`native_int8_copy` builds a copy of a model from those, for the benches' own rows.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from backend.models import reduced

SOURCE = Path(__file__).with_name("int8_linear.cpp")
log = logging.getLogger(__name__)


NAME = "int8_linear_v1"  # the build's name under TORCH_EXTENSIONS_DIR


def built() -> bool:
    """Whether this machine has compiled the kernel from this checkout's source already (a bench run did): loading it
    then takes a second, where a build takes 20-60 s. A build from another checkout does not count: cpp_extension
    rebuilds when the source's path changes."""
    from torch.utils.cpp_extension import _get_build_directory

    folder = Path(_get_build_directory(NAME, False))
    recipe = folder / "build.ninja"
    return (folder / f"{NAME}.so").exists() and recipe.exists() and f" {SOURCE}\n" in recipe.read_text()


@functools.cache
def kernel() -> Callable | None:
    """`int8_linear(x fp32 [M, K], w int8 [N, K], scale fp32 [N]) -> fp32 [M, N]`, or None where unavailable."""
    if torch.backends.cpu.get_cpu_capability() not in ("AVX512", "AMX"):  # the kernel is AVX-512 only
        return None
    try:
        from torch.utils.cpp_extension import load

        module = load(NAME, [str(SOURCE)], extra_cflags=["-O3", "-mavx512f", "-mavx512bw", "-fopenmp"],
                      verbose=False)
    except Exception as exc:  # no compiler, no ninja, a failed build: the bench rows on it are left out
        log.warning("trial int8 kernel unavailable: %s", exc)
        return None
    return module.int8_linear


class NativeInt8Linear(reduced.Int8Linear):
    """The int8 copy's Linear (same rounded weight) multiplying on the trial kernel: fp32 activations and an fp32
    scale, where PyTorch's op takes both in bf16."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__(weight, bias)
        self.scale = weight.detach().float().abs().amax(dim=1).clamp(min=1e-12).div(127.0).contiguous()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = kernel()(x.reshape(-1, self.in_features).float(), self.weight_int8, self.scale)
        y = y.to(x.dtype).reshape(*x.shape[:-1], self.out_features)
        return y if self.bias is None else y + self.bias


def native_int8_copy(model: nn.Module, round_head: bool) -> nn.Module:
    """reduced.py's int8 copy of `model` with every rounded Linear on the trial kernel (built apart from reduced's
    per-model cache, so the app's copies are untouched)."""
    if kernel() is None:
        raise RuntimeError("no trial int8 kernel on this machine (AVX-512, a C++ compiler and ninja are needed)")
    linear = reduced._LINEAR["int8"]
    reduced._LINEAR["int8"] = NativeInt8Linear
    try:
        return reduced._rounded_copy(model, "int8", round_head)
    finally:
        reduced._LINEAR["int8"] = linear
