"""FP8 formats and the cast a scaled tensor goes through.

Out-of-range casts are not portable (NaN on some backends and versions for e4m3fn, inf for e5m2), so the
quantiser clamps to the format's range first, and counts what it had to clamp (an overflow).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import UserError


@dataclass(frozen=True)
class Fp8Format:
    name: str
    dtype: torch.dtype
    max_value: float  # largest finite magnitude
    min_normal: float


FORMATS: dict[str, Fp8Format] = {
    "e4m3": Fp8Format("e4m3", torch.float8_e4m3fn, 448.0, 2.0 ** -6),
    "e5m2": Fp8Format("e5m2", torch.float8_e5m2, 57344.0, 2.0 ** -14),
}


def get_format(name: str) -> Fp8Format:
    if name not in FORMATS:
        raise UserError(f"Unknown FP8 format {name!r}; choose one of {', '.join(FORMATS)}.")
    return FORMATS[name]


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
    q = x.clamp(-fmt.max_value, fmt.max_value).to(fmt.dtype).float()
    underflows = int(((q == 0) & (x != 0)).sum())
    back = q / scale
    ref = torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32))
    denom = float(ref.norm())
    return Quantised(overflows, underflows, float((back - ref).norm()) / denom if denom > 0 else 0.0, nonfinite)
