"""Plotly selection events -> the drill-down a page asks its backend verb for (Disagreement, Decoding, FP8).

Pure functions (AppTest cannot fire a Plotly selection, so the page's "event -> choice" is tested here). A
selection only chooses: it yields indices, each checked against the shown result's shape; the numbers the
drill-down shows come from the backend verb, never from the event.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def selected_points(event: Any) -> list[Mapping]:
    """The points of a `st.plotly_chart(..., on_select="rerun")` return value (empty when nothing is selected)."""
    if not isinstance(event, Mapping):
        return []
    selection = event.get("selection") or {}
    points = selection.get("points") if isinstance(selection, Mapping) else None
    return [p for p in points or [] if isinstance(p, Mapping)]


def _index(value: Any, size: int) -> int | None:
    """`value` as an index in [0, size), or None (not a whole number, or out of range)."""
    if isinstance(value, (list, tuple)) or value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not number.is_integer() or not 0 <= number < size:
        return None
    return int(number)


def _custom(point: Mapping) -> list:
    data = point.get("customdata")
    if data is None:
        return []
    return list(data) if isinstance(data, (list, tuple)) else [data]


def fp8_head_pick(event: Any, bound: np.ndarray) -> tuple[int, int] | None:
    """A clicked cell of the head heatmap (customdata [layer, head]) or a clicked layer of the per-layer chart
    (x = layer; the head shown is the one with the largest bound, which sets the layer's FP8 scale).
    `bound` `[L, H]` is the shown result's guaranteed bound. The last selected point wins."""
    n_layers, n_heads = bound.shape
    for point in reversed(selected_points(event)):
        custom = _custom(point)
        if len(custom) == 2:
            layer, head = _index(custom[0], n_layers), _index(custom[1], n_heads)
            if layer is not None and head is not None:
                return layer, head
        layer = _index(point.get("x"), n_layers)
        if layer is not None:
            return layer, int(np.argmax(bound[layer]))
    return None


def trace_position_pick(event: Any, length: int) -> int | None:
    """A clicked position of the disagreement trace (x = the generated token's index), within the rollout."""
    for point in reversed(selected_points(event)):
        position = _index(point.get("x"), length)
        if position is not None:
            return position
    return None


def particle_pick(event: Any, steps: int, n: int) -> tuple[int, int | None] | None:
    """(step, particle row or None) from the ESS chart (x = step, 1-based; a resampling event or any step) or the
    genealogy (customdata [step, row], step 0-based). None: nothing usable was selected."""
    for point in reversed(selected_points(event)):
        custom = _custom(point)
        if len(custom) == 2:
            step, row = _index(custom[0], steps), _index(custom[1], n)
            if step is not None and row is not None:
                return step, row
        x = point.get("x")
        step = _index(float(x) - 1, steps) if isinstance(x, (int, float)) and not isinstance(x, bool) else None
        if step is not None:
            return step, None
    return None
