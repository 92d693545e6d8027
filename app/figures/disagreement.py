"""Figures of the disagreement view: results of backend.disagreement -> plotly figures / HTML snippets."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.clickable import Pickable
from app.ui.text import literal_html, plot_label
from backend.disagreement.divergences import SIGNALS
from backend.disagreement.sweep_stats import cell_stats

SIGNAL_LABELS = SIGNALS.labels()
POLICY_COLORS = {"guided": "#d62728", "entropy": "#ff7f0e", "random": "#7f7f7f", "early": "#2ca02c"}


def _display(piece: str) -> str:
    return plot_label(piece.replace("\n", "⏎").replace(" ", "·")) or "∅"


def top_positions(values: np.ndarray, n: int) -> list[int]:
    return [int(i) for i in np.argsort(-np.asarray(values), kind="stable")[:n]] if len(values) else []


POSITION = Pickable("position", ("position",))  # a click on the trace picks a generated token's position
TOKEN_AXIS = dict(title="position (hover for the token; the rollout text above shows every token)", nticks=20,
                  tickfont=dict(size=10))  # one label per token was unreadable past ~40 tokens (issue 45 §5)


def trace_figure(rollout, signals=("ce", "kl_base_reason", "kl_reason_base", "js", "entropy_base"),
                 highlight: str = "ce", top_n: int = 5) -> go.Figure:
    """Per-token signals along one rollout (x: the generated token's position; the token on hover), the top
    `highlight` tokens marked. Points are clickable (the page's drill-down)."""
    x = list(range(rollout.length))
    labels = [_display(t) for t in rollout.tokens]
    fig = go.Figure()
    for name in signals:
        fig.add_scatter(x=x, y=rollout.signals[name], mode="lines+markers", name=SIGNAL_LABELS.get(name, name),
                        marker=dict(size=5), customdata=POSITION.rows(x, extras=(labels,)),
                        hovertemplate="%{x}: %{customdata[2]}<br>%{y:.3f} nats<extra>" +
                        SIGNAL_LABELS.get(name, name) + "</extra>")
    top = top_positions(rollout.signals[highlight], top_n)
    fig.add_scatter(x=top, y=[float(rollout.signals[highlight][i]) for i in top], mode="markers+text",
                    text=[labels[i] for i in top], textposition="top center", customdata=POSITION.rows(top),
                    marker=dict(size=11, color="#d62728", symbol="circle-open", line=dict(width=2)),
                    name=f"top {len(top)} by {SIGNAL_LABELS.get(highlight, highlight)}")
    fig.update_xaxes(**TOKEN_AXIS)
    return fig.update_layout(height=440, margin=dict(t=90, b=10), yaxis_title="nats", clickmode="event+select",
                             legend=dict(orientation="h", y=1.02, yanchor="bottom"),
                             title=dict(text=f"{rollout.source.capitalize()} rollout · click a point for both "
                                             "models' next-token distributions there", y=0.98))


def distributions_figure(result, base_name: str, reasoning_name: str) -> go.Figure:
    """Both models' top-k next tokens at one position (backend.disagreement.position.PositionResult), side by
    side, the token the rollout wrote there marked."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.18,
                        subplot_titles=(f"base: {plot_label(base_name)}", f"reasoning: {plot_label(reasoning_name)}"))
    for col, top, colour in ((1, result.base_top, "#4a7ab5"), (2, result.reasoning_top, "#d62728")):
        names = [f"{_display(t.token)} ({t.id})" for t in top][::-1]
        fig.add_bar(x=[t.prob for t in top][::-1], y=names, orientation="h", marker_color=[
            "#2ca02c" if t.id == result.token_id else colour for t in top][::-1], showlegend=False,
            hovertemplate="%{y}: p = %{x:.4f}<extra></extra>", row=1, col=col)
        fig.update_xaxes(title_text="probability", range=[0, 1], row=1, col=col)
    # each title starts from its outer edge: centred on its panel, a long model name ran off the right edge
    fig.layout.annotations[0].update(x=0, xanchor="left")
    fig.layout.annotations[1].update(x=1, xanchor="right")
    return fig.update_layout(height=60 + 28 * max(len(result.base_top), 1), margin=dict(t=50, b=10),
                             title=dict(text=f"Position {result.position}: the rollout wrote "
                                             f"{_display(result.token)} (green)", y=0.99))


def tokens_html(tokens, values, strong) -> str:
    """Tokens shaded by `values` (red, darker = larger) with the positions in `strong` outlined."""
    values = np.asarray(values, dtype=float)
    scale = float(values.max()) if len(values) and values.max() > 0 else 1.0
    spans = []
    for i, piece in enumerate(tokens):
        alpha = 0.06 + 0.6 * max(float(values[i]), 0.0) / scale
        border = "border:2px solid #d62728;" if i in strong else ""
        text = literal_html(piece).replace("<br>", "⏎<br>")
        spans.append(f'<span title="{i}: {values[i]:.3f}" style="background:rgba(214,39,40,{alpha:.2f});'
                     f'{border}border-radius:3px;padding:0 1px">{text}</span>')
    return '<div style="font-family:monospace;line-height:1.9;white-space:pre-wrap">' + "".join(spans) + "</div>"


def rollout_html(rollout, signal: str = "ce", top_n: int = 5) -> str:
    """The rollout's text, each token shaded by `signal`, the top `top_n` outlined."""
    values = rollout.signals[signal]
    return tokens_html(rollout.tokens, values, set(top_positions(values, top_n)))


def intervention_html(result) -> str:
    """An intervention-decoded text: tokens written by the reasoning model shaded and outlined."""
    marks = np.asarray(result.intervened, dtype=float)
    return tokens_html(result.tokens, marks, set(np.nonzero(result.intervened)[0].tolist()))


def lorenz_figure(analysis) -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dot", color="#999"), name="equal share")
    for part in analysis.per_source:
        c = part.concentration
        fig.add_scatter(x=c.lorenz_x, y=c.lorenz_y, mode="lines",
                        name=f"{part.source} rollouts (Gini {c.gini:.2f})")
    return fig.update_layout(height=360, margin=dict(t=30, b=10), xaxis_title="share of tokens (ascending)",
                             yaxis_title=f"share of total {SIGNAL_LABELS.get(analysis.signal, analysis.signal)}",
                             title="Lorenz curve")


def position_figure(part) -> go.Figure:
    """Where the top tokens sit (t / T) against where all tokens sit."""
    c = part.concentration
    edges = np.linspace(0, 1, len(c.position_hist) + 1)
    centers = (edges[:-1] + edges[1:]) / 2
    fig = go.Figure()
    fig.add_bar(x=centers, y=c.position_hist, width=edges[1] - edges[0], name=f"top {c.top_fraction:.0%} tokens",
                marker_color="#d62728")
    fig.add_scatter(x=centers, y=c.position_hist_all, mode="lines+markers", name="all tokens", line_color="#555")
    return fig.update_layout(height=320, margin=dict(t=30, b=10), xaxis_title="relative position t / T",
                             yaxis_title="share of tokens", title=f"Positions ({part.source} rollouts)")


def category_figure(part) -> go.Figure:
    enrichment = part.concentration.category_enrichment()
    names = sorted(enrichment, key=enrichment.get, reverse=True)
    counts = part.concentration.categories
    fig = go.Figure(go.Bar(x=names, y=[enrichment[n] for n in names], marker_color="#4a7ab5",
                           customdata=[f"{counts[n][0]} of {counts[n][1]}" for n in names],
                           hovertemplate="%{x}: %{y:.2f}x (%{customdata})<extra></extra>"))
    fig.add_hline(y=1.0, line_dash="dot", line_color="#999")
    return fig.update_layout(height=320, margin=dict(t=30, b=10), yaxis_title="enrichment among top tokens",
                             title=f"Token categories ({part.source} rollouts)")


def roc_figure(part) -> go.Figure:
    fig = go.Figure()
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dot", color="#999"), name="chance")
    if part.failure is not None:
        for name, (fpr, tpr) in part.failure.roc.items():
            fig.add_scatter(x=fpr, y=tpr, mode="lines", line_shape="hv",
                            name=f"{name.replace('topk', f'top-{part.failure.top_k}')} "
                                 f"(AUROC {part.failure.auroc[name]:.2f})")
    else:
        fig.add_annotation(text="needs both right and wrong answers", showarrow=False, x=0.5, y=0.5)
    return fig.update_layout(height=340, margin=dict(t=30, b=10), xaxis_title="false positive rate",
                             yaxis_title="true positive rate (wrong answers flagged)",
                             title=f"Failure prediction ({part.source} rollouts)")


def sweep_figure(result) -> go.Figure:
    """Accuracy (with its Wilson 95% interval) vs realised intervention rate per policy, base and reasoning
    alone as lines."""
    fig = go.Figure()
    stats = cell_stats(result)
    for policy in dict.fromkeys(c.policy for c in stats):
        cells = sorted((c for c in stats if c.policy == policy), key=lambda c: c.rate)
        fig.add_scatter(x=[100 * c.rate for c in cells], y=[100 * c.accuracy for c in cells], mode="lines+markers",
                        name=policy, line_color=POLICY_COLORS.get(policy),
                        error_y=dict(type="data", symmetric=False, array=[100 * (c.high - c.accuracy) for c in cells],
                                     arrayminus=[100 * (c.accuracy - c.low) for c in cells], thickness=1),
                        customdata=[_sweep_hover(c) for c in cells],
                        hovertemplate="%{customdata}<extra>" + policy + "</extra>")
    for name, value, color, where in (("base alone", result.base_accuracy, "#555", "bottom left"),
                                      ("reasoning alone", result.reasoning_accuracy, "#9467bd", "top left")):
        fig.add_hline(y=100 * value, line_dash="dash", line_color=color, annotation_text=f"{name} {value:.0%}",
                      annotation_position=where)
    floor = result.reasoning_differs  # NaN for a sweep stored before it was recorded
    if np.isfinite(floor):  # the rate at which handing over every differing token reproduces the reasoning model
        fig.add_vline(x=100 * floor, line_dash="dot", line_color="#9467bd",
                      annotation_text=f"reasoning path: {floor:.0%} of its tokens differ from the base's pick",
                      annotation_position="bottom right", annotation_font_size=10)
    return fig.update_layout(height=380, margin=dict(t=30, b=10), xaxis_title="intervention rate ρ (% of tokens)",
                             yaxis_title="exact-match accuracy (%)",
                             title=f"Budget sweep on {result.n_problems} problems (bars: Wilson 95% intervals)")


def sweep_table(result) -> pd.DataFrame:
    """One row per sweep cell: the budget, what it realised, the accuracy with its interval and the paired test."""
    points = {(p.policy, p.budget): p for p in result.points}
    rows = []
    for c in cell_stats(result):
        point = points[(c.policy, c.budget)]
        rows.append({"policy": c.policy, "budget r": c.budget, "realised rate": round(c.rate, 4),
                     "accuracy": round(c.accuracy, 4), "right": f"{c.right}/{c.scored}",
                     "95% CI": f"{c.low:.0%}-{c.high:.0%}", "gap recovered": round(c.gap_share, 3),
                     "vs random (only this / only random)": f"{c.only_policy} / {c.only_control}"
                     if np.isfinite(c.p_value) else "", "McNemar p": float(f"{c.p_value:.3g}"),
                     "mean length": round(point.mean_length, 1), "tau": point.tau, "lambda": point.lam})
    return pd.DataFrame(rows)


def _sweep_hover(c) -> str:
    text = (f"budget {c.budget:.0%}: rate {100 * c.rate:.1f}%, accuracy {c.right}/{c.scored} = "
            f"{100 * c.accuracy:.0f}% (95% CI {100 * c.low:.0f}-{100 * c.high:.0f}%)")
    if np.isfinite(c.gap_share):
        text += f"<br>{100 * c.gap_share:.0f}% of the base-to-reasoning gap"
    if np.isfinite(c.p_value):
        text += f"<br>vs random at this budget: {c.only_policy} only here, {c.only_control} only random, p = {c.p_value:.2g}"
    return text


def eopd_trace_figure(signals: dict, tokens, tau: float) -> go.Figure:
    """Teacher entropy against the gate, and the per-token loss terms along a student rollout."""
    x = list(range(len(tokens)))
    labels = [_display(t) for t in tokens]
    fig = go.Figure()
    gated = [i for i in x if signals["gate"][i] > 0]
    fig.add_bar(x=gated, y=[float(signals["teacher_entropy"][i]) for i in gated], name="gated (H_T ≥ τ)",
                marker_color="rgba(255,127,14,0.35)")
    for name, label in (("teacher_entropy", "teacher entropy H_T"), ("reverse_kl", "reverse KL (exact)"),
                        ("forward_kl_topk", "forward KL on teacher top-k"), ("eopd_term", "EOPD term"),
                        ("plain_term", "reverse-KL term (k1)")):
        fig.add_scatter(x=x, y=signals[name], mode="lines", name=label, customdata=labels,
                        hovertemplate="%{x}: %{customdata}: %{y:.3f}<extra>" + label + "</extra>")
    fig.add_hline(y=tau, line_dash="dot", line_color="#ff7f0e", annotation_text=f"τ = {tau}")
    fig.update_xaxes(**TOKEN_AXIS)
    return fig.update_layout(height=440, margin=dict(t=90, b=10), yaxis_title="nats",
                             legend=dict(orientation="h", y=1.02, yanchor="bottom"),
                             title=dict(text="EOPD signals along the base rollout", y=0.98))


def eopd_summary_figure(result, tau: float) -> go.Figure:
    """Teacher entropy over all student tokens, with the gate threshold."""
    pooled = np.concatenate([s["teacher_entropy"] for s in result.signals]) if result.signals else np.zeros(0)
    fig = go.Figure(go.Histogram(x=pooled, nbinsx=40, marker_color="#4a7ab5", name="tokens"))
    fig.add_vline(x=tau, line_dash="dot", line_color="#ff7f0e",
                  annotation_text=f"τ = {tau}: {result.summary.gated_share:.1%} gated")
    return fig.update_layout(height=320, margin=dict(t=30, b=10), xaxis_title="teacher entropy (nats)",
                             yaxis_title="tokens", title=f"Teacher entropy over {result.summary.n_tokens} tokens")
