"""Plotly selection event -> what the page's drill-down opens. The selection only chooses: it yields indices that
are checked against the shapes the page knows, and the backend verb re-checks them and reads everything itself."""
from __future__ import annotations

from typing import Any


def selected_points(event: Any) -> list[dict]:
    """The points of a `st.plotly_chart(..., on_select="rerun")` return value (attribute or dict access; none for
    a chart without a selection)."""
    if event is None:
        return []
    selection = event.get("selection") if isinstance(event, dict) else getattr(event, "selection", None)
    if selection is None:
        return []
    points = selection.get("points") if isinstance(selection, dict) else getattr(selection, "points", None)
    return [p for p in points or [] if isinstance(p, dict)]


def clicked_cell(event: Any, bounds: tuple[int, ...]) -> tuple[int, ...] | None:
    """The first selected point whose customdata starts with len(bounds) whole numbers within 0..bound-1 each,
    e.g. (layer, head) with bounds (n_layers, n_heads); None when no point qualifies."""
    for point in selected_points(event):
        data = point.get("customdata")
        if not isinstance(data, (list, tuple)) or len(data) < len(bounds):
            continue
        try:
            values = tuple(int(v) for v in data[:len(bounds)])
        except (TypeError, ValueError):
            continue
        if all(float(v) == float(raw) and 0 <= v < bound for v, raw, bound in zip(values, data, bounds)):
            return values
    return None


def remember_click(state: dict, key: str, event: Any, bounds: tuple[int, ...]) -> tuple[int, ...] | None:
    """Store a new click under `key` (a later rerun without a new click keeps it); return the current choice,
    dropped when it no longer fits the bounds (another model or map)."""
    clicked = clicked_cell(event, bounds)
    if clicked is not None:
        state[key] = clicked
    chosen = state.get(key)
    if chosen is None or len(chosen) != len(bounds) or not all(0 <= v < b for v, b in zip(chosen, bounds)):
        return None
    return tuple(chosen)
