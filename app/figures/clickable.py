"""Click layers: Streamlit's Plotly selection events carry no points for heatmap traces (streamlit/streamlit#8760,
#15042), so a clickable heatmap gets an invisible marker on every cell centre whose customdata names the cell; a
click selects that marker (outlined once selected) and the page reads its customdata (app/ui/selection.py)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

CLICK_LAYER = "click"  # the trace name pages and tests find the layer by


def cell_click_layer(x: np.ndarray, y: np.ndarray, customdata: np.ndarray, hovertemplate: str,
                     size: int = 14) -> go.Scatter:
    """Markers at cells (x[i], y[i]) `[n]` with customdata `[n, k]`: transparent until selected."""
    return go.Scatter(x=np.asarray(x).tolist(), y=np.asarray(y).tolist(), mode="markers", name=CLICK_LAYER,
                      showlegend=False, customdata=np.asarray(customdata).tolist(), hovertemplate=hovertemplate,
                      marker=dict(symbol="square-open", size=size, color="#111111", opacity=0.0,
                                  line=dict(width=2)),
                      selected=dict(marker=dict(opacity=1.0)), unselected=dict(marker=dict(opacity=0.0)))


def grid_click_layer(n_rows: int, n_cols: int, hovertemplate: str, size: int = 14) -> go.Scatter:
    """A click layer over an `[n_rows, n_cols]` heatmap drawn at x = column, y = row; customdata [row, column]."""
    rows, cols = np.divmod(np.arange(n_rows * n_cols), n_cols)
    return cell_click_layer(cols, rows, np.stack([rows, cols], axis=1), hovertemplate, size)
