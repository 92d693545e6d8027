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
    """The point's customdata as a list: a numeric array reaches the browser as a typed array, which the
    selection event carries as an object {"0": v0, "1": v1, ...}."""
    data = point.get("customdata")
    if data is None:
        return []
    if isinstance(data, Mapping):
        try:
            return [data[k] for k in sorted(data, key=int)]
        except (TypeError, ValueError):
            return []
    return list(data) if isinstance(data, (list, tuple)) else [data]


def fp8_head_pick(event: Any, bound: np.ndarray) -> tuple[int, int] | None:
    """A clicked cell of the head heatmap (customdata [layer, head, ...]) or a clicked layer of the per-layer chart
    (x = layer; the head shown is the one with the largest bound, which sets the layer's FP8 scale).
    `bound` `[L, H]` is the shown result's guaranteed bound. The last selected point wins."""
    n_layers, n_heads = bound.shape
    for point in reversed(selected_points(event)):
        custom = _custom(point)
        if len(custom) >= 2:
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


def particle_pick(event: Any, rounds: list[tuple[int, int]]) -> tuple[int, int, int | None] | None:
    """(round, step, row or None) from a point of the ESS chart (a step of a round, e.g. a resampling event) or of
    the genealogy (a particle after a step): both carry customdata [round, step (0-based), row (-1: none)].
    `rounds` holds each round's (steps, particles); a point outside them chooses nothing."""
    for point in reversed(selected_points(event)):
        custom = _custom(point)
        if len(custom) < 3:
            continue
        k = _index(custom[0], len(rounds))
        if k is None:
            continue
        steps, n = rounds[k]
        step = _index(custom[1], steps)
        row = None if custom[2] == -1 else _index(custom[2], n)
        if step is not None and (row is not None or custom[2] == -1):
            return k, step, row
    return None
