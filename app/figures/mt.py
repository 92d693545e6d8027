"""Figures of the MT-heads view: head maps, patching vs attribution, evaluation and ablation charts."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.clickable import HEAD, grid_click_layer
from backend.mt.heads import HeadMap

SELECTED_COLOR = "#111111"


def _head_map_traces(head_map: HeadMap, which: str, percent: float, colorbar: dict) -> list[go.BaseTraceType]:
    """The L x H heatmap of one score map (hover: layer, head, score) and a ring on each selected head."""
    scores = head_map.patching if which == "patching" else head_map.attribution
    n_layers, n_heads = scores.shape
    limit = float(np.abs(scores).max()) or 1.0
    traces = [go.Heatmap(
        z=scores, x=list(range(n_heads)), y=list(range(n_layers)), colorscale="RdBu", zmid=0, zmin=-limit,
        zmax=limit, colorbar=dict(title="Δ log p" if which == "patching" else "attr.", **colorbar),
        hovertemplate="layer %{y}<br>head %{x}<br>score %{z:.4f}<extra></extra>")]
    chosen = head_map.selected(percent)
    if chosen:
        traces.append(go.Scatter(x=[h for _, h in chosen], y=[lay for lay, _ in chosen], mode="markers",
                                 marker=dict(symbol="circle-open", size=14, color=SELECTED_COLOR, line_width=2),
                                 name=f"top {percent:g}%", showlegend=False,
                                 hovertemplate="selected: layer %{y}, head %{x}<extra></extra>"))
    return traces


def head_heatmaps(head_map: HeadMap, percent: float, titles: tuple[str, str]) -> go.Figure:
    """Patching and attribution side by side, each map on its own colour scale (their units differ) with the
    selected heads ringed in both, and every head as a point of patching vs attribution in a third panel: one
    chart to draw (a new browser tab pays for every Plotly chart) that reads left to right."""
    rho, agree = head_map.rank_correlation, head_map.agreement(percent)
    fig = make_subplots(rows=1, cols=3, column_widths=[0.3, 0.3, 0.4], horizontal_spacing=0.09,
                        subplot_titles=(*titles, f"Spearman ρ = {rho:.2f} · top-{percent:g}% overlap "
                                                 f"{agree:.0%}"))
    for col, which in enumerate(("patching", "attribution"), start=1):
        domain_end = fig.layout[f"xaxis{'' if col == 1 else col}"].domain[1]
        for trace in _head_map_traces(head_map, which, percent, dict(x=domain_end + 0.005, len=0.9, thickness=12)):
            fig.add_trace(trace, row=1, col=col)
        fig.update_xaxes(title_text="head", dtick=1, row=1, col=col)
    for trace in _agreement_traces(head_map, percent):
        fig.add_trace(trace, row=1, col=3)
    for col, which in enumerate(("patching", "attribution"), start=1):  # last: on top, clicks open the head
        fig.add_trace(grid_click_layer(HEAD, *head_map.patching.shape, "layer %{customdata[1]}<br>head "
                                       f"%{{customdata[2]}}<br>{which} %{{text}}<br>click to open<extra></extra>"),
                      row=1, col=col)
        fig.data[-1].text = [f"{v:.4f}" for v in (head_map.patching if which == "patching"
                                                   else head_map.attribution).ravel()]
    fig.update_xaxes(title_text="activation patching (Δ log p, nats)", row=1, col=3)
    # the scatter's axis on its right: the gap to its left holds the attribution map's colour bar
    fig.update_yaxes(title_text=f"attribution ({head_map.config.attribution})", side="right", row=1, col=3)
    fig.update_yaxes(title_text="layer", row=1, col=1)
    return fig.update_layout(height=520, margin=dict(t=50, b=10),
                             legend=dict(orientation="h", x=1.0, xanchor="right", y=-0.12))


def _agreement_traces(head_map: HeadMap, percent: float) -> list[go.Scatter]:
    """Every head as a point: activation-patching score vs gradient-attribution score, the selected in red."""
    n_heads = head_map.patching.shape[1]
    chosen = set(head_map.selected(percent))
    frame = pd.DataFrame({"patching": head_map.patching.ravel(), "attribution": head_map.attribution.ravel(),
                          "layer": np.repeat(np.arange(head_map.patching.shape[0]), n_heads),
                          "head": np.tile(np.arange(n_heads), head_map.patching.shape[0])})
    frame["selected"] = [(lay, h) in chosen for lay, h in zip(frame["layer"], frame["head"])]
    traces = []
    for flag, color, name in ((False, "#7f9cc4", "other heads"), (True, "#d1495b", f"top {percent:g}% (patching)")):
        part = frame[frame["selected"] == flag]
        traces.append(go.Scatter(x=part["patching"], y=part["attribution"], mode="markers", name=name,
                                 marker=dict(color=color, size=9 if flag else 6),
                                 customdata=HEAD.rows(part["layer"], part["head"]),
                                 hovertemplate="layer %{customdata[1]}, head %{customdata[2]}<br>patching %{x:.4f}"
                                               "<br>attribution %{y:.4f}<extra></extra>"))
    return traces


def evaluation_bars(table: pd.DataFrame) -> go.Figure:
    """chrF++ and target-language rate per condition (rows of `Experiment.table()`)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("chrF++", "target-language rate"), horizontal_spacing=0.25)
    fig.add_trace(go.Bar(y=table["condition"], x=table["chrF++"], orientation="h", marker_color="#4a7ab5",
                         hovertemplate="%{y}<br>chrF++ %{x:.1f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Bar(y=table["condition"], x=table["target-language rate"], orientation="h",
                         marker_color="#d1495b", hovertemplate="%{y}<br>rate %{x:.0%}<extra></extra>"), row=1, col=2)
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(range=[0, 1], tickformat=".0%", row=1, col=2)
    return fig.update_layout(height=120 + 34 * len(table), showlegend=False, margin=dict(t=40, b=10))


def ablation_chart(summary_rows: pd.DataFrame) -> go.Figure:
    """Target-language rate and chrF++ of few-shot with heads zeroed; random draws as points with their spread.

    `summary_rows`: one row per condition with columns group (baseline/selected/random), condition, rate, chrf."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("target-language rate", "chrF++"))
    colors = {"baseline": "#8c8c8c", "selected": "#d1495b", "random": "#7f9cc4"}
    for col, metric in ((1, "rate"), (2, "chrf")):
        for group in ("baseline", "selected", "random"):
            part = summary_rows[summary_rows["group"] == group]
            if part.empty:
                continue
            mean = float(part[metric].mean())
            spread = float(part[metric].std(ddof=0)) if len(part) > 1 else 0.0
            fig.add_trace(go.Bar(x=[group], y=[mean], marker_color=colors[group], showlegend=False,
                                 error_y=dict(type="data", array=[spread], visible=len(part) > 1),
                                 hovertemplate=f"{group}<br>mean %{{y:.3f}} (± {spread:.3f}, n={len(part)})<extra></extra>"),
                          row=1, col=col)
            if len(part) > 1:
                fig.add_trace(go.Scatter(x=[group] * len(part), y=part[metric], mode="markers", showlegend=False,
                                         marker=dict(color="#222", size=7), text=part["condition"],
                                         hovertemplate="%{text}<br>%{y:.3f}<extra></extra>"), row=1, col=col)
    fig.update_yaxes(range=[0, 1], tickformat=".0%", row=1, col=1)
    return fig.update_layout(height=380, margin=dict(t=40, b=10))


def ablation_rows(conditions, selected_type: str = "language") -> pd.DataFrame:
    """Rows for `ablation_chart`: plain few-shot, few-shot with the selected `selected_type` heads zeroed,
    and few-shot with random heads zeroed (one row per draw)."""
    rows = []
    for c in conditions:
        if c.config.prompt != "few-shot" or c.config.steer:
            continue
        if c.config.ablate is None:
            group = "baseline"
        elif c.config.random_draw >= 0:
            group = "random"
        elif c.config.ablate.head_type == selected_type:
            group = "selected"
        else:
            continue
        rows.append({"group": group, "condition": c.label, "rate": c.target_rate, "chrf": c.chrf})
    return pd.DataFrame(rows, columns=["group", "condition", "rate", "chrf"])
