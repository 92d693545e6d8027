"""Figures of the run history."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from app.figures.axes import log_axis


def _empty(height: int) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text="No runs yet: run any view and it appears here.", showarrow=False)
    return fig.update_layout(height=height, xaxis_visible=False, yaxis_visible=False)


def _feature_colours(features) -> dict[str, str]:
    palette = px.colors.qualitative.Plotly
    return {feature: palette[i % len(palette)] for i, feature in enumerate(sorted(set(features)))}


# Graph objects, not plotly express: express builds these in ~60-120 ms of the server's CPU per page run (its
# grouping machinery), graph objects in a few ms, and Home and Runs draw them on every visit.
def runs_timeline(runs: pd.DataFrame) -> go.Figure:
    """Each run as a point: when it ran, how long its computation took, cached or computed."""
    if runs.empty:
        return _empty(260)
    colours = _feature_colours(runs["feature"])
    fig = go.Figure()
    for feature, group in runs.groupby("feature", sort=True):  # one trace per feature; open circles: cached
        source = group["cached"].map({True: "cached", False: "computed"})
        fig.add_trace(go.Scatter(
            x=group["created"], y=group["seconds"], mode="markers", name=feature,
            marker=dict(color=colours[feature], symbol=group["cached"].map({True: "circle-open",
                                                                               False: "circle"}).tolist()),
            customdata=np.column_stack([source, group[["run_id", "action", "model_id"]].to_numpy()]),
            hovertemplate=(f"{feature} (%{{customdata[0]}})<br>requested at %{{x}}<br>compute time %{{y:.3g}} s"
                           "<br>run %{customdata[1]}, %{customdata[2]}<br>model %{customdata[3]}<extra></extra>")))
    return fig.update_layout(height=320, margin=dict(t=30, b=10), legend_title_text="",
                             xaxis_title="requested at (open circles: served from the store)",
                             yaxis=log_axis(runs["seconds"], title="compute time (s, log)"))


def runs_per_feature(runs: pd.DataFrame) -> go.Figure:
    """Stacked bars: cached vs computed requests per feature."""
    if runs.empty:
        return _empty(280)
    counts = (runs.assign(source=runs["cached"].map({True: "cached", False: "computed"}))
              .groupby(["feature", "source"]).size().unstack(fill_value=0))
    fig = go.Figure([go.Bar(x=counts.index, y=counts[source], name=source, marker_color=colour)
                     for source, colour in (("cached", "#8fbf8f"), ("computed", "#4a7ab5")) if source in counts])
    return fig.update_layout(height=280, margin=dict(t=30, b=10), legend_title_text="", barmode="stack",
                             xaxis_title="feature", yaxis_title="runs")
