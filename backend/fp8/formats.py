"""FP8 formats and the cast a scaled tensor goes through.

Out-of-range casts are not portable (NaN on some backends and versions for e4m3fn, inf for e5m2), so the
quantiser clamps to the format's range first, and counts what it had to clamp (an overflow).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from backend.variants import Registry, Variant


def _round_trip(x: torch.Tensor, dtype: torch.dtype, max_value: float) -> torch.Tensor:
    """fp32 -> clamp to the format's range -> FP8 -> fp32: what a scaled tensor keeps after the cast."""
    return x.clamp(-max_value, max_value).to(dtype).float()


@dataclass(frozen=True)
class Fp8Format(Variant):
    """`run(x) -> x` after the clamped round trip through the format. Build one with `_format`, which keeps
    `run` and the fields below consistent (the registry's shape needs defaults; these are placeholders)."""

    dtype: torch.dtype = torch.float32
    max_value: float = 0.0  # largest finite magnitude
    min_normal: float = 0.0


def _format(name: str, label: str, help: str, dtype: torch.dtype, max_value: float, min_normal: float
            ) -> Fp8Format:
    return Fp8Format(name=name, label=label, help=help, run=partial(_round_trip, dtype=dtype, max_value=max_value),
                     dtype=dtype, max_value=max_value, min_normal=min_normal)


FORMATS: Registry[Fp8Format] = Registry("fp8-formats", "FP8 format")
FORMATS.register(_format("e4m3", "E4M3 (max 448)", "4 exponent, 3 mantissa bits: finer steps, narrower range",
                         torch.float8_e4m3fn, 448.0, 2.0 ** -6))
FORMATS.register(_format("e5m2", "E5M2 (max 57344)", "5 exponent, 2 mantissa bits: coarser steps, wider range",
                         torch.float8_e5m2, 57344.0, 2.0 ** -14))


@dataclass(frozen=True)
class Quantised:
    """Outcome of casting `values * scale` to FP8 (clamped first)."""

    overflows: int  # |values * scale| > max_value before clamping
    underflows: int  # nonzero values that became 0
    rel_error: float  # ||dequantised - values|| / ||values||
    nonfinite_unclamped: int  # entries a plain (unclamped) cast would make NaN/inf on this backend


def quantise(values: np.ndarray, scale: float, fmt: Fp8Format) -> Quantised:
    x = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)) * scale
    overflows = int((x.abs() > fmt.max_value).sum())
    nonfinite = int((~torch.isfinite(x.to(fmt.dtype).float())).sum()) if overflows else 0
    q = fmt.run(x)
    underflows = int(((q == 0) & (x != 0)).sum())
    back = q / scale
    ref = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
    denom = float(ref.norm())
    return Quantised(overflows=overflows, underflows=underflows,
                     rel_error=float((back - ref).norm()) / denom if denom > 0 else 0.0, nonfinite_unclamped=nonfinite)
