"""Figures of the MT head drill-down (backend.mt.head_detail.HeadDetail): pure functions of the result."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.ui.text import plot_label

LANGUAGE_COLOURS = {"target": "#2a9d8f", "source": "#e9c46a", "both": "#8d99ae", "": "#bcbcbc"}


def attention_row(detail) -> go.Figure:
    """The head's attention from the answer position over the prompt's tokens (x = position, hover = token)."""
    tokens = [plot_label(repr(t)) for t in detail.tokens]
    fig = go.Figure(go.Bar(x=np.arange(len(tokens)), y=detail.pattern, customdata=tokens, marker_color="#264653",
                           hovertemplate="position %{x}: %{customdata}<br>attention %{y:.3f}<extra></extra>"))
    top = np.argsort(-detail.pattern, kind="stable")[:5]
    for i in top:
        fig.add_annotation(x=int(i), y=float(detail.pattern[i]), text=tokens[i], showarrow=False, yshift=10,
                           font=dict(size=10))
    return fig.update_layout(height=260, margin=dict(t=40, b=10), title=(
        f"L{detail.config.layer}.H{detail.config.head} attends from the answer position (next: "
        f"{plot_label(repr(detail.target_token))})"), xaxis_title="prompt position", yaxis_title="attention")


def vocab_effects(detail) -> go.Figure:
    """Promoted (top) and suppressed (bottom) tokens: the head's o_proj contribution's direct effect on their logits,
    coloured by the side of the data set they occur in."""
    items = list(reversed(detail.suppressed)) + list(reversed(detail.promoted))
    labels = [f"{plot_label(repr(e.token))} #{e.id}" for e in items]
    fig = go.Figure(go.Bar(x=[e.logit for e in items], y=labels, orientation="h", showlegend=False,  # legend: below
                           marker_color=[LANGUAGE_COLOURS[e.language] for e in items],
                           customdata=[e.language or "neither" for e in items],
                           hovertemplate="%{y}<br>direct effect %{x:.3f} logits<br>in %{customdata} "
                                         "sentences<extra></extra>"))
    for side, colour in LANGUAGE_COLOURS.items():  # a legend of the colours
        fig.add_trace(go.Bar(x=[None], y=[None], marker_color=colour, name=side or "neither", orientation="h"))
    return fig.update_layout(height=max(260, 22 * len(items)), margin=dict(t=40, b=10), barmode="overlay",
                             title=f"What it writes: {detail.target_share:.0%} of the promoted tokens are "
                                   "target-language tokens", xaxis_title="direct effect on the logit",
                             legend=dict(orientation="h", y=-0.15))


def patching_per_prompt(detail) -> go.Figure:
    """The head's patching effect on each of the map's prompts; the dashed line is their mean (the map's score)."""
    labels = [f"row {r}: {plot_label(repr(t))}" for r, t in zip(detail.rows, detail.targets)]
    fig = go.Figure(go.Bar(x=labels, y=list(detail.patching), marker_color="#e76f51",
                           hovertemplate="%{x}<br>Δ log p %{y:.4f} nats<extra></extra>"))
    fig.add_hline(y=detail.mean_patching, line_dash="dash", annotation_text=f"mean {detail.mean_patching:.4f}")
    return fig.update_layout(height=260, margin=dict(t=40, b=10), title="Patching effect per prompt",
                             yaxis_title="Δ log p(target), nats", xaxis_title="prompt (answer token)")
