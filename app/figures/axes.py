"""Axis settings shared by the figures."""
from __future__ import annotations

import math

import numpy as np


def log_axis(*values, **extra) -> dict:
    """A log axis whose every label is a whole value: Plotly's own ticks over one to three decades label the 2s and
    5s by their leading digit alone, which read as "2, 1000, 5, 2, 100". Over two or more powers of ten only the
    decades are labelled; over a narrower span, 1-2-5 values written out in full."""
    data = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values]) if values else np.zeros(0)
    data = data[np.isfinite(data) & (data > 0)]
    axis = {"type": "log", **extra}
    if not data.size:
        return axis
    low, high = math.log10(data.min()), math.log10(data.max())
    if math.floor(high) - math.ceil(low) >= 1:  # two or more powers of ten inside the data
        return {**axis, "dtick": 1}
    ticks = [m * 10.0 ** k for k in range(math.floor(low) - 1, math.ceil(high) + 1) for m in (1, 2, 5)]
    ticks = [t for t in ticks if data.min() / 2 <= t <= data.max() * 2]  # around the data: autorange's margin
    return {**axis, "tickvals": ticks, "ticktext": [f"{t:g}" for t in ticks]}
