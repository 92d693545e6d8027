"""Figures and text of the NAG neuron drill-down (backend.nag.neuron.NeuronDetail): pure functions of the result."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.figures.axes import log_axis
from app.ui.text import literal_html, plot_label


def activation_histogram(detail) -> go.Figure:
    centres = (detail.hist_edges[:-1] + detail.hist_edges[1:]) / 2
    fig = go.Figure(go.Bar(x=centres, y=detail.hist_counts, width=np.diff(detail.hist_edges), marker_color="#6a4c93",
                           hovertemplate="activation ≈ %{x:.3f}<br>%{y} tokens<extra></extra>"))
    return fig.update_layout(height=260, margin=dict(t=40, b=10), yaxis=log_axis(detail.hist_counts),
                             title=f"Activation over {detail.scanned_tokens:,} tokens of {detail.scanned_docs} pool "
                                   "documents", xaxis_title="up-projection output", yaxis_title="tokens (log)")


def logit_effects(detail) -> go.Figure:
    items = list(reversed(detail.suppressed)) + list(reversed(detail.promoted))
    fig = go.Figure(go.Bar(x=[e.effect for e in items], y=[f"{plot_label(repr(e.token))} #{e.id}" for e in items],
                           orientation="h", marker_color=["#2a9d8f" if e.effect > 0 else "#e76f51" for e in items],
                           hovertemplate="%{y}<br>%{x:.3f} per unit activation<extra></extra>"))
    return fig.update_layout(height=max(260, 22 * len(items)), margin=dict(t=40, b=10),
                             title="Tokens its output promotes (top) and suppresses (bottom)",
                             xaxis_title="logit effect of its down-projection column (up to a positive factor)")


def contexts_html(detail) -> str:
    """The top contexts, the strongest token marked. The text is pool data: escaped (app.ui.text.literal_html),
    the only markup is ours."""
    rows = []
    for c in detail.contexts:
        colour = "#ffd166" if c.activation > 0 else "#8ecae6"
        rows.append(f'<div style="margin:2px 0"><code>{c.activation:+.3f}</code> '
                    f'<span style="color:#777">{literal_html(c.doc_id)}</span> · {literal_html(c.left)}'
                    f'<mark style="background:{colour};border-radius:3px">{literal_html(c.token)}</mark>'
                    f"{literal_html(c.right)}</div>")
    return '<div style="line-height:1.8;white-space:pre-wrap">' + "".join(rows) + "</div>"
