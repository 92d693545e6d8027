"""Figures of the Inspect view: logit-lens heatmap, final-prediction curve, DLA head map and MLP bars, attention
patterns. Pure: results of backend.internals -> plotly figures / frames. Token texts are data (plot_label)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.clickable import HEAD
from app.ui.text import plot_label


def token_label(piece: str) -> str:
    return plot_label(piece.replace("\n", "⏎").replace(" ", "·")) or "∅"


def _token_axis(fig: go.Figure, tokens, axis: str = "x") -> None:
    ticks = dict(tickmode="array", tickvals=list(range(len(tokens))),
                 ticktext=[f"{token_label(t)}" for t in tokens], tickfont=dict(size=10))
    (fig.update_xaxes(tickangle=-50, **ticks) if axis == "x" else fig.update_yaxes(autorange="reversed", **ticks))


CELL_CHARS = 10  # a top-1 token written in a lens cell is cut after this many characters (hover has it whole)
INK = "#111111"  # axis labels in plain ink: Plotly's default grey tick labels were hard to read


def _cell(piece: str) -> str:
    label = token_label(piece)
    return label if len(label) <= CELL_CHARS else label[:CELL_CHARS - 1] + "…"


def lens_figure(result) -> go.Figure:
    """Layers x positions, coloured by the top-1 token's probability; each cell writes its top-1 token out (spaces
    as ·, newlines as ⏎); hover: the top 5 with their probabilities. Input tokens run along the bottom, unrotated,
    under the model's own output (the last row)."""
    n, length, k = result.top_ids.shape
    hover = [[f"layer {layer} · position {t} ({token_label(result.tokens[t])})<br>" + "<br>".join(
        f"{j + 1}. {token_label(result.top_tokens[layer][t][j])}: {result.top_probs[layer, t, j]:.1%}"
        for j in range(min(k, 5))) for t in range(length)] for layer in range(n)]
    text = [[_cell(result.top_tokens[layer][t][0]) for t in range(length)] for layer in range(n)]
    fig = go.Figure(go.Heatmap(z=result.top_probs[:, :, 0], x=list(range(length)), y=list(range(n)), zmin=0, zmax=1,
                               colorscale="Blues", text=text, texttemplate="%{text}" if n * length <= 1200 else None,
                               textfont=dict(size=12), customdata=hover, hovertemplate="%{customdata}<extra></extra>",
                               xgap=1, ygap=1, colorbar=dict(title="top-1 p")))
    fig.update_xaxes(tickmode="array", tickvals=list(range(length)), tickangle=0,
                     ticktext=[token_label(t) for t in result.tokens], tickfont=dict(size=13, color=INK))
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=12, color=INK), dtick=1 if n <= 20 else 2,
                     title=dict(text="layer (0 = embeddings)", font=dict(color=INK)))
    return fig.update_layout(height=max(340, 24 * n + 170), margin=dict(t=40, b=10),
                             title="Logit lens: each layer's top-1 token and its probability")


def final_figure(result) -> go.Figure:
    """The model's final prediction at the traced position (and the tracked token, when one is set) read out after
    each layer: probability above, rank below (0 = the top token; log scale)."""
    layers = list(range(result.n_layers + 1))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4])
    lines = [(result.predicted_token, result.predicted_prob, result.predicted_rank, "#2166ac", "final prediction")]
    if result.tracked_id is not None:
        lines.append((result.tracked_token, result.tracked_prob, result.tracked_rank, "#d6604d", "tracked"))
    for token, prob, rank, colour, kind in lines:
        name = f"{token_label(token)} ({kind})"
        fig.add_scatter(x=layers, y=prob, mode="lines+markers", name=name, line=dict(color=colour), row=1, col=1,
                        customdata=rank,
                        hovertemplate="layer %{x}<br>p = %{y:.4f}<br>rank %{customdata}<extra></extra>")
        fig.add_scatter(x=layers, y=[int(r) + 1 for r in rank], mode="lines+markers", name=name, showlegend=False,
                        line=dict(color=colour, dash="dot"), row=2, col=1, customdata=rank,
                        hovertemplate="layer %{x}<br>rank %{customdata}<extra></extra>")
    fig.update_yaxes(title="probability", range=[0, 1], row=1, col=1)
    fig.update_yaxes(title="rank + 1", type="log", autorange="reversed", row=2, col=1)
    fig.update_xaxes(title="layer", row=2, col=1)
    tracked = "" if result.tracked_id is None else f" and p({token_label(result.tracked_token)})"
    title = (f"p({token_label(result.predicted_token)}){tracked} at position {result.position} "
             f"({token_label(result.tokens[result.position])}) by layer")
    return fig.update_layout(height=420, margin=dict(t=40, b=10), title=title, legend=dict(orientation="h", y=-0.15))


def logit_name(result) -> str:
    """What DLA attributes: a logit, or a logit difference when a contrast token is set."""
    return "logit" if result.contrast_id is None else "logit difference"


def dla_figure(result) -> go.Figure:
    """The L x H head map: a heatmap to read, and over it one invisible marker per head to click (a Heatmap is not
    selectable in Plotly; markers are). The clicked head's marker is drawn as a ring."""
    n_layers, n_heads = result.heads.shape
    layers, heads = np.meshgrid(range(n_layers), range(n_heads), indexing="ij")
    limit = float(np.abs(result.heads).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=result.heads, x=list(range(n_heads)), y=list(range(n_layers)), colorscale="RdBu",
                               zmid=0, zmin=-limit, zmax=limit, colorbar=dict(title=logit_name(result).replace(
                                   "difference", "diff.")), hoverinfo="skip"))
    size = max(8, min(30, int(600 / n_layers)))
    fig.add_scatter(x=heads.ravel(), y=layers.ravel(), mode="markers",
                    customdata=HEAD.rows(layers.ravel(), heads.ravel(), extras=(result.heads.ravel(),)),
                    marker=dict(symbol="square-open", size=size, color="#111111", opacity=0, line=dict(width=2)),
                    selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=0)), showlegend=False,
                    hovertemplate="layer %{y} · head %{x}<br>direct effect %{customdata[3]:+.4f}"
                                  "<extra>click to open</extra>")
    target = token_label(result.target_token) + (f" − {token_label(result.contrast_token)}"
                                                 if result.contrast_token is not None else "")
    fig.update_xaxes(title="head", tickmode="linear", dtick=1, range=[-0.5, n_heads - 0.5])
    fig.update_yaxes(title="layer", range=[n_layers - 0.5, -0.5], dtick=1 if n_layers <= 16 else 2)
    return fig.update_layout(height=max(300, 20 * n_layers + 140), margin=dict(t=40, b=10), clickmode="event+select",
                             title=f"Heads' direct effect on the {logit_name(result)}: {target}", dragmode=False)


def mlp_figure(result) -> go.Figure:
    fig = go.Figure(go.Bar(x=list(range(len(result.mlps))), y=result.mlps,
                           marker_color=["#2166ac" if v >= 0 else "#b2182b" for v in result.mlps],
                           hovertemplate="MLP %{x}<br>%{y:+.4f}<extra></extra>"))
    return fig.update_layout(height=260, margin=dict(t=40, b=10), xaxis_title="layer", yaxis_title=logit_name(result),
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
