"""Figures of the Inspect view: logit-lens heatmap, final-prediction curve, DLA head map and MLP bars, attention
patterns. Pure: results of backend.inspect -> plotly figures / frames. Token texts are data (plot_label)."""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app.ui.text import plot_label


def token_label(piece: str) -> str:
    return plot_label(piece.replace("\n", "⏎").replace(" ", "·")) or "∅"


def _token_axis(fig: go.Figure, tokens, axis: str = "x") -> None:
    ticks = dict(tickmode="array", tickvals=list(range(len(tokens))),
                 ticktext=[f"{token_label(t)}" for t in tokens], tickfont=dict(size=10))
    (fig.update_xaxes(tickangle=-50, **ticks) if axis == "x" else fig.update_yaxes(autorange="reversed", **ticks))


def lens_figure(result) -> go.Figure:
    """Layers x positions, coloured by the top-1 token's probability; each cell names it; hover: the top 5."""
    n, length, k = result.top_ids.shape
    hover = [[f"layer {layer} · position {t} ({token_label(result.tokens[t])})<br>" + "<br>".join(
        f"{token_label(result.top_tokens[layer][t][j])}: {result.top_probs[layer, t, j]:.3f}" for j in range(min(k, 5)))
        for t in range(length)] for layer in range(n)]
    text = [[token_label(result.top_tokens[layer][t][0])[:8] for t in range(length)] for layer in range(n)]
    fig = go.Figure(go.Heatmap(z=result.top_probs[:, :, 0], x=list(range(length)), y=list(range(n)), zmin=0, zmax=1,
                               colorscale="Blues", text=text, texttemplate="%{text}" if n * length <= 900 else None,
                               textfont=dict(size=9), customdata=hover, hovertemplate="%{customdata}<extra></extra>",
                               colorbar=dict(title="top-1 p")))
    _token_axis(fig, result.tokens)
    return fig.update_layout(height=max(320, 18 * n + 160), margin=dict(t=40, b=10),
                             yaxis_title="layer (0 = embeddings)", title="Logit lens: each layer's top-1 token and its probability")


def final_figure(result) -> go.Figure:
    """The probability of the model's final prediction at the traced position, read out after each layer."""
    layers = list(range(result.n_layers + 1))
    fig = go.Figure(go.Scatter(x=layers, y=result.predicted_prob, mode="lines+markers",
                               customdata=result.predicted_rank,
                               hovertemplate="layer %{x}<br>p = %{y:.4f}<br>rank %{customdata}<extra></extra>"))
    title = (f"p({token_label(result.predicted_token)}) at position {result.position} "
             f"({token_label(result.tokens[result.position])}) by layer")
    return fig.update_layout(height=300, margin=dict(t=40, b=10), xaxis_title="layer", yaxis_title="probability",
                             yaxis_range=[0, 1], title=title)


def dla_figure(result) -> go.Figure:
    """The L x H head map: a heatmap to read, and over it one invisible marker per head to click (a Heatmap is not
    selectable in Plotly; markers are). The clicked head's marker is drawn as a ring."""
    n_layers, n_heads = result.heads.shape
    layers, heads = np.meshgrid(range(n_layers), range(n_heads), indexing="ij")
    limit = float(np.abs(result.heads).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=result.heads, x=list(range(n_heads)), y=list(range(n_layers)), colorscale="RdBu",
                               zmid=0, zmin=-limit, zmax=limit, colorbar=dict(title="logit"), hoverinfo="skip"))
    size = max(8, min(30, int(600 / n_layers)))
    fig.add_scatter(x=heads.ravel(), y=layers.ravel(), mode="markers", customdata=result.heads.ravel(),
                    marker=dict(symbol="square-open", size=size, color="#111111", opacity=0, line=dict(width=2)),
                    selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=0)), showlegend=False,
                    hovertemplate="layer %{y} · head %{x}<br>direct effect %{customdata:+.4f}"
                                  "<extra>click to open</extra>")
    target = token_label(result.target_token) + (f" − {token_label(result.contrast_token)}"
                                                 if result.contrast_token is not None else "")
    fig.update_xaxes(title="head", tickmode="linear", dtick=1, range=[-0.5, n_heads - 0.5])
    fig.update_yaxes(title="layer", range=[n_layers - 0.5, -0.5], dtick=1 if n_layers <= 16 else 2)
    return fig.update_layout(height=max(300, 20 * n_layers + 140), margin=dict(t=40, b=10), clickmode="event+select",
                             title=f"Heads' direct effect on logit({target})", dragmode=False)


def mlp_figure(result) -> go.Figure:
    fig = go.Figure(go.Bar(x=list(range(len(result.mlps))), y=result.mlps,
                           marker_color=["#2166ac" if v >= 0 else "#b2182b" for v in result.mlps],
                           hovertemplate="MLP %{x}<br>%{y:+.4f}<extra></extra>"))
    return fig.update_layout(height=260, margin=dict(t=40, b=10), xaxis_title="layer", yaxis_title="logit",
                             title="MLPs' direct effect, per layer")


def pattern_figure(tokens, pattern: np.ndarray, title: str) -> go.Figure:
    """Query x key attention weights over the prompt's tokens."""
    length = len(tokens)
    pairs = [[f"{token_label(tokens[q])} → {token_label(tokens[k])}" for k in range(length)] for q in range(length)]
    fig = go.Figure(go.Heatmap(z=pattern, x=list(range(length)), y=list(range(length)), zmin=0, zmax=1,
                               colorscale="Viridis", colorbar=dict(title="weight"), customdata=pairs,
                               hovertemplate="query %{y} · key %{x}<br>%{customdata}<br>%{z:.3f}<extra></extra>"))
    _token_axis(fig, tokens, "x")
    _token_axis(fig, tokens, "y")
    return fig.update_layout(height=max(320, 16 * length + 160), margin=dict(t=40, b=10), title=title,
                             xaxis_title="key", yaxis_title="query")


def effects_frame(effects) -> pd.DataFrame:
    """Promoted or suppressed tokens as a table (token texts shown as data)."""
    return pd.DataFrame({"token": [repr(e.token) for e in effects], "id": [e.id for e in effects],
                         "logit effect": [round(e.logit, 4) for e in effects]})


def _index(value) -> int | None:
    """A square's index from an event coordinate: a finite, non-negative whole number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value) if value >= 0 and value == int(value) else None


def selected_head(event) -> tuple[int, int] | None:
    """(layer, head) of the clicked square of `dla_figure`, from a plotly selection event; None when none. The event
    comes from the browser: a point whose coordinates are not whole non-negative numbers is ignored."""
    points = (getattr(getattr(event, "selection", None), "points", None) or []) if event else []
    for point in points:
        if not isinstance(point, Mapping):
            continue
        layer, head = _index(point.get("y")), _index(point.get("x"))
        if layer is not None and head is not None:
            return layer, head
    return None
