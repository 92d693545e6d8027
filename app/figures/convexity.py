"""ConvexBench figures: macro F1 against depth per strategy (with its interval), per-rule node accuracy."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

LABELS = {"direct": "Direct (whole expression)", "decomposed": "Decomposed (one operator per question)"}


def f1_vs_depth(f1_rows: list[dict], title: str = "Macro F1 against composition depth") -> go.Figure:
    """One line per strategy; error bars are the 95% bootstrap interval; the hover says n and what was answered."""
    fig = go.Figure()
    frame = pd.DataFrame(f1_rows)
    for strategy, part in (frame.groupby("strategy", sort=False) if len(frame) else []):
        part = part.sort_values("depth")
        fig.add_trace(go.Scatter(
            x=part["depth"], y=part["f1"], mode="lines+markers", name=LABELS.get(strategy, strategy),
            error_y={"type": "data", "symmetric": False, "array": part["f1_hi"] - part["f1"],
                     "arrayminus": part["f1"] - part["f1_lo"]},
            customdata=list(zip(part["n"], part["answered"].astype(str))),
            hovertemplate="depth %{x}<br>F1 %{y:.2f}<br>n = %{customdata[0]}<br>answers %{customdata[1]}"
                          "<extra></extra>"))
    fig.add_hline(y=1 / 3, line_dash="dot", annotation_text="uniform guessing ≈ 0.33 (one class always: 0.17)",
                  annotation_position="bottom right", line_color="gray")
    fig.update_layout(title=title, xaxis_title="depth (operators per variable chain)", yaxis_title="macro F1",
                      yaxis_range=[0, 1.05], xaxis_type="log", height=380, margin={"t": 50, "b": 40})
    return fig


def rule_accuracy(rules: list[dict]) -> go.Figure:
    """Accuracy of the decomposed strategy's per-node answers, one bar per rule, Wilson intervals."""
    frame = pd.DataFrame(rules)
    fig = go.Figure()
    if len(frame):
        fig.add_trace(go.Bar(
            y=frame["rule"], x=frame["accuracy"], orientation="h",
            error_x={"type": "data", "symmetric": False, "array": frame["accuracy_hi"] - frame["accuracy"],
                     "arrayminus": frame["accuracy"] - frame["accuracy_lo"]},
            customdata=list(zip(frame["truth"], frame["n"], frame["answered_instead"])),
            hovertemplate="%{y}<br>right %{x:.0%} of %{customdata[1]} nodes<br>truth: %{customdata[0]}"
                          "<br>answered instead: %{customdata[2]}<extra></extra>"))
    fig.update_layout(title="Per-node answers by rule (decomposed)", xaxis_title="accuracy", xaxis_range=[0, 1.05],
                      height=max(260, 26 * len(frame) + 90), margin={"t": 50, "b": 40, "l": 10})
    return fig
