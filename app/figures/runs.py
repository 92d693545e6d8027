"""Figures of the run history."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go


def _empty(height: int) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text="No runs yet: run any view and it appears here.", showarrow=False)
    return fig.update_layout(height=height, xaxis_visible=False, yaxis_visible=False)


def runs_timeline(runs: pd.DataFrame) -> go.Figure:
    """Each run as a point: when it ran, how long its computation took, cached or computed."""
    if runs.empty:
        return _empty(260)
    frame = runs.assign(source=runs["cached"].map({True: "cached", False: "computed"}))
    fig = px.scatter(frame, x="created", y="seconds", color="feature", symbol="source",
                     hover_data=["run_id", "action", "model_id"], log_y=True,
                     labels={"seconds": "compute time (s, log)", "created": "requested at"})
    return fig.update_layout(height=320, margin=dict(t=30, b=10), legend_title_text="")


def runs_per_feature(runs: pd.DataFrame) -> go.Figure:
    """Stacked bars: cached vs computed requests per feature."""
    if runs.empty:
        return _empty(280)
    counts = (runs.assign(source=runs["cached"].map({True: "cached", False: "computed"}))
              .groupby(["feature", "source"]).size().reset_index(name="runs"))
    fig = px.bar(counts, x="feature", y="runs", color="source", barmode="stack",
                 color_discrete_map={"cached": "#8fbf8f", "computed": "#4a7ab5"})
    return fig.update_layout(height=280, margin=dict(t=30, b=10), legend_title_text="")
