"""Figures of the watermark view: detection evidence, highlighted text, ROC curves, quality, attribution,
latency. Pure functions of backend results (no Streamlit)."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

LEVEL_COLOURS = {"model": "#4a7ab5", "user": "#d08a2e", "": "#bbbbbb", "total": "#5a9a5a"}
ONE_BIT = {(1, 1): "#9fd79f", (1, 0): "#d7ecb0", (0, 1): "#d7ecb0", (0, 0): "#f3b3a6"}


def _empty(message: str, height: int = 260) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False)
    return fig.update_layout(height=height, xaxis_visible=False, yaxis_visible=False, margin=dict(t=30, b=10))


def level_evidence(report) -> go.Figure:
    """z-score per level (model, user, total) of the attributed or best-guess identity, p-values on hover."""
    levels = [("model", report.model_level), ("user", report.user_level), ("total", report.total)]
    levels = [(name, s) for name, s in levels if s is not None]
    if not levels:
        return _empty(f"{report.verdict}: nothing to score")
    fig = go.Figure(go.Bar(
        x=[n for n, _ in levels], y=[s.z for _, s in levels], marker_color=[LEVEL_COLOURS[n] for n, _ in levels],
        text=[f"z={s.z:.2f}<br>p={s.p_value:.2g}<br>{s.n_bits} bits" for _, s in levels], textposition="auto",
        hovertemplate="%{x}: z=%{y:.2f}<extra></extra>"))
    fig.add_hline(y=4.0, line_dash="dot", annotation_text="z = 4", line_color="#888")
    return fig.update_layout(height=300, margin=dict(t=40, b=10), yaxis_title="z-score",
                             title=f"Evidence by level · {report.verdict}")


def sentence_contributions(report) -> go.Figure:
    """One bar per sentence: its counted contribution, coloured by level (grey: unusable)."""
    rows = report.sentences
    if not rows:
        return _empty("No sentences")
    fig = go.Figure(go.Bar(
        x=[r.index + 1 for r in rows], y=[r.contribution for r in rows],
        marker_color=[LEVEL_COLOURS[r.level] for r in rows],
        customdata=[[r.level or "unusable", r.sem_bit, r.syn_bit, r.text[:80]] for r in rows],
        hovertemplate="sentence %{x} (%{customdata[0]})<br>semantic bit %{customdata[1]}, syntactic bit "
                      "%{customdata[2]}<br>%{customdata[3]}<extra></extra>"))
    return fig.update_layout(height=260, margin=dict(t=30, b=10), xaxis_title="sentence",
                             yaxis_title="contribution", yaxis_range=[0, 1.05], title="Per-sentence contribution")


def highlighted_sentences(text: str, report) -> str:
    """HTML: the text with each sentence shaded by its bits (green both 1, pale one, red none, grey unusable)."""
    parts, pos = [], 0
    for r in report.sentences:
        parts.append(html.escape(text[pos:r.start]))
        colour = ONE_BIT.get((r.sem_bit, r.syn_bit), "#e6e6e6") if r.usable else "#e6e6e6"
        title = f"{r.level or 'unusable'} level · semantic {r.sem_bit} · syntactic {r.syn_bit}"
        parts.append(f'<span title="{html.escape(title)}" style="background:{colour};border-radius:3px;'
                     f'padding:1px 2px">{html.escape(text[r.start:r.end])}</span>')
        pos = r.end
    parts.append(html.escape(text[pos:]))
    return '<div style="line-height:1.9;white-space:pre-wrap">' + "".join(parts) + "</div>"


def highlighted_tokens(report) -> str:
    """HTML: KGW tokens, green ones shaded green, red ones red, unscored grey."""
    colours = {1: "#9fd79f", 0: "#f3b3a6", -1: "#e6e6e6"}
    spans = [f'<span style="background:{colours[g]}">{html.escape(t)}</span>' for t, g in report.tokens]
    return '<div style="line-height:1.9;white-space:pre-wrap">' + "".join(spans) + "</div>"


def roc_curves(result, method: str) -> go.Figure:
    """ROC curve per condition (clean and each attack) for one method."""
    curves = [c for c in result.curves if c.method == method]
    if not curves:
        return _empty("No evaluation yet")
    fig = go.Figure()
    for c in curves:
        fig.add_trace(go.Scatter(x=c.fpr, y=c.tpr, mode="lines", name=c.condition, line_shape="hv",
                                 line_width=3 if c.condition == "clean" else 1.5))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dot", color="#aaa"),
                             showlegend=False))
    return fig.update_layout(height=360, margin=dict(t=40, b=10), xaxis_title="false positive rate",
                             yaxis_title="true positive rate", title=f"ROC · {method}")


def perplexity_bars(result) -> go.Figure:
    frame = pd.DataFrame([q.__dict__ for q in result.quality])
    if frame.empty:
        return _empty("No evaluation yet")
    fig = go.Figure(go.Bar(x=frame["method"], y=frame["ppl_median"], marker_color=["#999", "#4a7ab5", "#d08a2e"][
        :len(frame)], text=[f"{v:.1f}" for v in frame["ppl_median"]], textposition="auto"))
    return fig.update_layout(height=280, margin=dict(t=40, b=10), yaxis_title="median perplexity",
                             title="Quality: perplexity under the generating model")


def attribution_curve(result) -> go.Figure:
    frame = pd.DataFrame([a.__dict__ for a in result.attribution])
    if frame.empty:
        return _empty("No evaluation yet")
    fig = go.Figure()
    for column, name in (("model_accuracy", "model"), ("user_accuracy", "model + user"),
                         ("user_decided", "user significant")):
        fig.add_trace(go.Scatter(x=frame["sentences"], y=frame[column], mode="lines+markers", name=name))
    return fig.update_layout(height=300, margin=dict(t=40, b=10), xaxis_title="first k sentences",
                             yaxis_title="accuracy", yaxis_range=[0, 1.05],
                             title=f"Attribution among {result.n_users} users (+ a decoy model)")


def latency_chart(rows: list[dict]) -> go.Figure:
    """Detection latency vs registry size, hierarchical vs flat (rows from bench/results/watermark.json)."""
    if not rows:
        return _empty("Run bench/watermark.py to measure latency")
    frame = pd.DataFrame(rows)
    fig = go.Figure()
    for column, name in (("hierarchical_ms", "hierarchical"), ("flat_ms", "flat scan")):
        fig.add_trace(go.Scatter(x=frame["users"], y=frame[column], mode="lines+markers", name=name))
    fig.update_xaxes(type="log", title="registered users")
    fig.update_yaxes(type="log", title="retrieval time (ms)")
    return fig.update_layout(height=320, margin=dict(t=40, b=10), title="Identity retrieval latency")


def registry_bars(frame: pd.DataFrame) -> go.Figure:
    if frame.empty:
        return _empty("No identities yet: add a model and users below.")
    fig = go.Figure(go.Bar(x=[f"{a} · {n}" for a, n in zip(frame["address"], frame["name"])], y=frame["users"],
                           marker_color="#4a7ab5"))
    return fig.update_layout(height=260, margin=dict(t=30, b=10), yaxis_title="users", title="Registered identities")


def finite(values) -> list[float]:
    return [float(v) for v in values if np.isfinite(v)]
