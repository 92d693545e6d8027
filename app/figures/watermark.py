"""Figures of the watermark view: detection evidence, highlighted text, ROC curves, quality, attribution,
latency. Pure functions of backend results (no Streamlit)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app.figures.axes import log_axis
from app.figures.clickable import Pickable
from app.ui.text import plot_label

LEVEL_COLOURS = {"model": "#4a7ab5", "user": "#d08a2e", "": "#bbbbbb", "total": "#5a9a5a", "tokens": "#5a9a5a"}
MARK_COLOURS = {"strong": "#9fd79f", "weak": "#d7ecb0", "miss": "#f3b3a6", "unscored": "#e6e6e6",
                 "neutral": "transparent"}  # neutral: scored, but the text is not flagged (no evidence colour)


def p_text(level) -> str:
    """A level's p-value as the verdict uses it, with what it was corrected over ("p = 0.0005, Šidák over 1 model")."""
    over = getattr(level, "corrected_over", "")
    if over:
        return f"p = {level.p_family:.2g}, {over}"
    if level.compared > 1:
        return f"p = {level.p_family:.2g} (best of {level.compared:,} keys)"
    return f"p = {level.p_value:.2g}"


def _empty(message: str, height: int = 260) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False)
    return fig.update_layout(height=height, xaxis_visible=False, yaxis_visible=False, margin=dict(t=30, b=10))


def level_evidence(detection) -> go.Figure:
    """Raw z-score of the best identity per level (IPMark: model, user, total; KGW: tokens), labelled with the
    p-value corrected for the keys it was the best of."""
    levels = detection.levels
    if not levels:
        return _empty(f"{detection.verdict}: nothing to score")
    fig = go.Figure(go.Bar(
        x=[s.level for s in levels], y=[s.z for s in levels],
        marker_color=[LEVEL_COLOURS.get(s.level, "#5a9a5a") for s in levels],
        text=[f"z={s.z:.2f}<br>{p_text(s)}<br>{s.n_bits} bits" for s in levels], textposition="auto",
        hovertemplate="%{x}: z=%{y:.2f}<extra></extra>"))
    # No threshold line: the verdict is taken on each level's corrected p (the bar labels), not on a z cut-off, and
    # a line the verdict does not use read as one ("watermarked" with the bar under "z = 4").
    return fig.update_layout(height=300, margin=dict(t=40, b=10), yaxis_title="z-score (raw, best identity)",
                             title=f"Evidence by level · {detection.verdict} (decided on the corrected p)")


# what a click opens: a sentence row (on the per-sentence chart or in the text), a token (in the text)
SENTENCE = Pickable("sentence", ("sentence",))
TOKEN = Pickable("token", ("token",))


def sentence_contributions(rows) -> go.Figure:
    """One bar per sentence row (IPMark's SentenceRow): its counted contribution, coloured by level (grey: unusable)."""
    if not rows:
        return _empty("No sentences")
    fig = go.Figure(go.Bar(
        x=[r.index + 1 for r in rows], y=[r.contribution for r in rows],
        marker_color=[LEVEL_COLOURS[r.level] for r in rows],
        customdata=[SENTENCE.encode(i, extras=(r.level or "unusable", r.sem_bit, r.syn_bit,
                                               plot_label(r.text[:80]))) for i, r in enumerate(rows)],
        hovertemplate="sentence %{x} (%{customdata[2]})<br>semantic bit %{customdata[3]}, syntactic bit "
                      "%{customdata[4]}<br>%{customdata[5]}<br>click for its details<extra></extra>"))
    return fig.update_layout(height=260, margin=dict(t=30, b=10), xaxis_title="sentence",
                             yaxis_title="contribution", yaxis_range=[0, 1.05], title="Per-sentence contribution")


MARK_WORDS = {"strong": "evidence (green / most keys' g-value 1)", "weak": "some evidence", "miss": "no evidence",
              "unscored": "not scored (context too short, or a repeat)", "neutral": "scored; the text is not flagged"}


def text_pieces(pieces) -> list[dict]:
    """The highlighted text as data for the clickable text (app/ui/watermark_text.py): each piece's text (set as
    text by the browser, never parsed as markup), its shade, its hover and, for a scored piece, its position in
    `pieces`, what a click on it selects (None: plain text between scored pieces)."""
    return [{"text": text, "colour": MARK_COLOURS[mark] if mark else "", "title": title if mark else "",
             "pick": i if mark else None} for i, (text, mark, title) in enumerate(pieces)]


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


def length_curve(result: dict) -> go.Figure:
    """Attribution accuracy by the number of sentences (the stored result of bench/watermark_length.py)."""
    rows = result.get("replayed") or []
    if not rows:
        return _empty("No stored measurement of attribution by length for this model")
    frame = pd.DataFrame(rows)
    fig = go.Figure()
    for column, name in (("model_accuracy", "model"), ("user_accuracy", "model + user"),
                         ("user_decided", "user named (corrected p <= alpha)")):
        fig.add_trace(go.Scatter(x=frame["sentences"], y=frame[column], mode="lines+markers", name=name,
                                 customdata=frame["n_texts"], hovertemplate="%{x} sentences: %{y:.2f} "
                                 "(%{customdata} texts)<extra></extra>"))
    fig.add_hline(y=0.9, line_dash="dot", line_color="#888", annotation_text="90%")
    title = (f"Attribution by length · {result.get('models', 2)} models x {result.get('users_per_model', '?')} users · "
             f"{result.get('texts_generated', 0)} generated texts replayed for every user")
    return fig.update_layout(height=320, margin=dict(t=40, b=10), xaxis_title="first k sentences",
                             yaxis_title="accuracy", yaxis_range=[0, 1.05], title=title)


def latency_chart(rows: list[dict]) -> go.Figure:
    """Detection latency vs registry size, hierarchical vs flat (rows of the stored result of bench/watermark.py)."""
    if not rows:
        return _empty("No stored measurement of detection latency")
    frame = pd.DataFrame(rows)
    fig = go.Figure()
    for column, name in (("hierarchical_ms", "hierarchical"), ("flat_ms", "flat scan")):
        fig.add_trace(go.Scatter(x=frame["users"], y=frame[column], mode="lines+markers", name=name))
    fig.update_xaxes(log_axis(frame["users"], title="registered users"))
    fig.update_yaxes(log_axis(frame["hierarchical_ms"], frame["flat_ms"], title="retrieval time (ms)"))
    return fig.update_layout(height=320, margin=dict(t=40, b=10), title="Identity retrieval latency")


def registry_bars(frame: pd.DataFrame) -> go.Figure:
    if frame.empty:
        return _empty("No identities yet: add a model and users below.")
    fig = go.Figure(go.Bar(x=[f"{a} · {plot_label(n)}" for a, n in zip(frame["address"], frame["name"])], y=frame["users"],
                           marker_color="#4a7ab5"))
    return fig.update_layout(height=260, margin=dict(t=30, b=10), yaxis_title="users", title="Registered identities")


def finite(values) -> list[float]:
    return [float(v) for v in values if np.isfinite(v)]
