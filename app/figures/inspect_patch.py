"""Figures of Inspect's causal sections: the activation-patching map (clickable cells), the patched run's top
tokens beside the clean and corrupted ones, and the logit lens of steered runs. Pure: results -> plotly / frames."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app.figures.clickable import Pickable, cell_click_layer
from app.figures.inspect import token_label


CELL = Pickable("cell", ("row", "column"))  # a drawn cell of the patching map (`cell_of`: its index in the result)


def patch_grid(result) -> tuple[np.ndarray, list[str], list[str]]:
    """(`[rows, columns]` values as drawn, row labels, column labels): layers x positions, layers x heads, or
    (layer, head) rows x positions for head_pos."""
    values = result.values
    if result.site == "head":
        return values, [f"L{l}" for l in range(values.shape[0])], [f"H{h}" for h in range(values.shape[1])]
    columns = [token_label(c) if c == d else f"{token_label(c)}/{token_label(d)}"
               for c, d in zip(result.tokens, result.corrupted_tokens)]
    if result.site == "head_pos":
        n_layers, n_heads, length = values.shape
        return (values.reshape(n_layers * n_heads, length),
                [f"L{l}H{h}" for l in range(n_layers) for h in range(n_heads)], columns)
    return values, [f"L{l}" for l in range(values.shape[0])], columns


def cell_of(result, row: int, column: int) -> tuple[int, ...]:
    """The index into `result.values` of a drawn cell."""
    if result.site == "head_pos":
        return (*divmod(row, result.values.shape[1]), column)
    return row, column


def patch_figure(result) -> go.Figure:
    """The patching map, 1 = the clean behaviour restored, 0 = none; each cell clickable."""
    grid, rows, columns = patch_grid(result)
    limit = max(1.0, float(np.abs(grid).max()))
    fig = go.Figure(go.Heatmap(z=grid, x=list(range(len(columns))), y=list(range(len(rows))), colorscale="RdBu",
                               zmid=0, zmin=-limit, zmax=limit, colorbar=dict(title="restored"), hoverinfo="skip"))
    n_rows, n_cols = grid.shape
    rr, cc = np.divmod(np.arange(n_rows * n_cols), n_cols)
    labels = [f"{rows[r]} · {columns[c]}: {grid[r, c]:+.3f}" for r, c in zip(rr.tolist(), cc.tolist())]
    fig.add_trace(cell_click_layer(cc, rr, CELL.rows(rr, cc, extras=(labels,)),
                                   "%{customdata[3]}<extra>click for its top tokens</extra>",
                                   size=max(6, min(24, int(500 / max(n_rows, n_cols))))))
    fig.update_xaxes(tickmode="array", tickvals=list(range(n_cols)), ticktext=columns, tickangle=-50,
                     tickfont=dict(size=10), title="head" if result.site == "head" else "position (clean/corrupted)")
    fig.update_yaxes(tickmode="array", tickvals=list(range(n_rows)), ticktext=rows, autorange="reversed",
                     tickfont=dict(size=9 if n_rows > 40 else 11))
    title = (f"Patching {result.site}: share of logit({token_label(result.target_token)}) − "
             f"logit({token_label(result.contrast_token)}) restored")
    return fig.update_layout(height=max(320, min(14 * n_rows, 2400) + 180), margin=dict(t=40, b=10), title=title,
                             clickmode="event+select", dragmode=False)


def top_frame(top) -> pd.DataFrame:
    """(token, probability) pairs as a table; tokens shown as data (repr)."""
    return pd.DataFrame({"token": [repr(t) for t, _ in top], "prob": [round(p, 4) for _, p in top]})


def steer_lens_figure(result) -> go.Figure:
    """Coefficients x layers: the top-1 token of the steered run's last position read out after each layer."""
    n_rows, n_cols = result.lens_probs.shape
    text = [[token_label(t)[:8] for t in row] for row in result.lens_tokens]
    fig = go.Figure(go.Heatmap(z=result.lens_probs, x=list(range(n_cols)), y=[f"{c:g}" for c in result.coefficients],
                               zmin=0, zmax=1, colorscale="Blues", text=text, texttemplate="%{text}",
                               textfont=dict(size=9), colorbar=dict(title="top-1 p"),
                               hovertemplate="coefficient %{y} · layer %{x}<br>%{text}: %{z:.3f}<extra></extra>"))
    fig.update_yaxes(type="category", title="coefficient")
    return fig.update_layout(height=160 + 40 * n_rows, margin=dict(t=40, b=10), xaxis_title="layer (input of; last: "
                             "the final residual)", title="Logit lens of the steered prompt's last token")
