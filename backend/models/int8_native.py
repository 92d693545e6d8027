"""A weight-only int8 matrix product built for this CPU (backend/models/int8_linear.cpp), for the int8 copy's layers.

PyTorch's `_weight_int8pack_mm` is far from the memory bandwidth at one to eight rows and slower per row the more
rows it gets (bench/int8_matmul.py), so a decode step of the int8 copy spends most of its time there rather than
reading weights. The C++ kernel widens each int8 weight row to fp32 once per block of four input rows and multiplies
in fp32 (AVX-512), with the next weight tiles prefetched: faster than PyTorch's op at one row and about twice as
fast at eight (docs/RESULTS.md, "The int8 copy's matrix product"), though still compute-bound at one row. It is compiled once per machine on first use
(torch's cpp_extension, cached under TORCH_EXTENSIONS_DIR); where the CPU lacks AVX-512 or the build fails, `kernel()`
returns None and callers keep PyTorch's op.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path

SOURCE = Path(__file__).with_name("int8_linear.cpp")
log = logging.getLogger(__name__)


@functools.cache
def kernel() -> Callable | None:
    """`int8_linear(x fp32 [M, K], w int8 [N, K], scale fp32 [N]) -> fp32 [M, N]`, or None where unavailable."""
    import torch

    if torch.backends.cpu.get_cpu_capability() not in ("AVX512", "AMX"):  # the kernel is AVX-512 only
        return None
    try:
        from torch.utils.cpp_extension import load

        module = load("int8_linear_v1", [str(SOURCE)], extra_cflags=["-O3", "-mavx512f", "-mavx512bw", "-fopenmp"],
                      verbose=False)
    except Exception as exc:  # no compiler, no ninja, a failed build: PyTorch's own op still works
        log.warning("int8 kernel unavailable, using torch's _weight_int8pack_mm: %s", exc)
        return None
    return module.int8_linear
