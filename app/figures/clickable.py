"""What a chart's points can be clicked as, and the click layers that make heatmap cells clickable.

A chart declares its selectable objects with `Pickable`s: each clickable point carries customdata
[kind, *fields, *extras], the kind saying what a click picks (a chart may hold several kinds, e.g. Inspect's graph:
states and edges), the fields naming it (whole numbers such as layer and head, or declared text fields), anything
after them for the hover only. The page's drill-down (app/ui/drilldown.py) reads a selected point back with the same
`Pickable`; a point that does not read as one picks nothing, so nothing the browser sends is trusted beyond the fields.

Click layers: Streamlit's Plotly selection events carry no points for heatmap traces (streamlit/streamlit#8760,
#15042), so a clickable heatmap gets an invisible marker on every cell centre whose customdata names the cell; a
click selects that marker (outlined once selected)."""
from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

CLICK_LAYER = "click"  # the trace name pages and tests find the layer by


@dataclass(frozen=True)
class Picked:
    """A picked object: its `kind`, its field values, and the `context` it was picked in (e.g. the prompt it was
    drawn for; a pick read under another context is none)."""
    kind: str
    values: tuple
    context: Hashable = None


@dataclass(frozen=True)
class Pickable:
    """One kind of clickable object: customdata [kind, *fields, *extras]. Fields are whole non-negative numbers
    (indices) except those named in `text`, which are strings."""
    kind: str
    fields: tuple[str, ...]
    text: tuple[str, ...] = ()

    def encode(self, *values, extras: Sequence = ()) -> list:
        """One point's customdata."""
        if len(values) != len(self.fields):
            raise ValueError(f"{self.kind} takes {self.fields}, got {values}")
        return [self.kind, *(_plain(v) for v in values), *(_plain(v) for v in extras)]

    def rows(self, *columns: Iterable, extras: Sequence[Iterable] = ()) -> list[list]:
        """Many points' customdata: one column per field (then per extra), equally long."""
        fields = [list(c) for c in columns]
        more = [list(c) for c in extras]
        return [self.encode(*(c[i] for c in fields), extras=[c[i] for c in more]) for i in range(len(fields[0]))]

    def of(self, *values, context: Hashable = None) -> Picked:
        """The pick this kind's point with these field values makes (what a click stores; tests set it directly)."""
        return Picked(self.kind, tuple(values), context)

    def read(self, customdata: Any) -> Picked | None:
        """The pick a selected point's customdata names, or None: another kind, too short, or a field that is not
        what it declares (the event comes from the browser)."""
        if not isinstance(customdata, (list, tuple)) or len(customdata) < 1 + len(self.fields):
            return None
        if customdata[0] != self.kind:
            return None
        values = []
        for name, raw in zip(self.fields, customdata[1:]):
            value = (raw if isinstance(raw, str) else None) if name in self.text else _index(raw)
            if value is None:
                return None
            values.append(value)
        return Picked(self.kind, tuple(values))


HEAD = Pickable("head", ("layer", "head"))  # an attention head: the FP8, MT-heads and Inspect head maps


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value Plotly serialises as a number or a string."""
    return value.item() if isinstance(value, np.generic) else value


def _index(value: Any) -> int | None:
    """A whole non-negative finite number as an int, else None (bools and strings are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0 or value != int(value):
        return None
    return int(value)


def cell_click_layer(x: np.ndarray, y: np.ndarray, customdata: list[list], hovertemplate: str,
                     size: int = 14) -> go.Scatter:
    """Markers at cells (x[i], y[i]) `[n]` with customdata rows `[n]` (a `Pickable`'s): transparent until
    selected."""
    return go.Scatter(x=np.asarray(x).tolist(), y=np.asarray(y).tolist(), mode="markers", name=CLICK_LAYER,
                      showlegend=False, customdata=customdata, hovertemplate=hovertemplate,
                      marker=dict(symbol="square-open", size=size, color="#111111", opacity=0.0,
                                  line=dict(width=2)),
                      selected=dict(marker=dict(opacity=1.0)), unselected=dict(marker=dict(opacity=0.0)))


def grid_click_layer(pickable: Pickable, n_rows: int, n_cols: int, hovertemplate: str,
                     size: int = 14) -> go.Scatter:
    """A click layer over an `[n_rows, n_cols]` heatmap drawn at x = column, y = row; each cell picked as
    `pickable` with fields (row, column), customdata [kind, row, column]."""
    rows, cols = np.divmod(np.arange(n_rows * n_cols), n_cols)
    return cell_click_layer(cols, rows, pickable.rows(rows, cols), hovertemplate, size)
