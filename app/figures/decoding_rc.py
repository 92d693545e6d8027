"""Figures of RC runs (reasoning-summary cycles): the answer after each cycle, and accuracy against cycles and
against generated tokens beside the batch's other settings (plain decoding at RC's total budget among them).

Pure functions from `backend.decoding` results to plotly figures and tables, no Streamlit.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from backend.decoding import BatchResult, DecodeResult
from backend.significance import wilson_interval


def cycles_table(result: DecodeResult) -> pd.DataFrame:
    """One row per cycle: its answer, whether it is right, the tokens it spent and the running total."""
    correct = result.cycle_correct
    return pd.DataFrame([{"cycle": i + 1, "answer": c.answer, "correct": correct[i],
                          "prompt_tokens": c.prompt_tokens, "reasoning_tokens": c.reasoning_tokens,
                          "summary_tokens": c.summary_tokens, "tokens_so_far": result.cycle_tokens[i]}
                         for i, c in enumerate(result.cycles)])


def cycle_answers(result: DecodeResult) -> go.Figure:
    """One problem: the answer after each cycle, green when right, red when wrong, grey without a checker."""
    table = cycles_table(result)
    colour = table["correct"].map({True: "seagreen", False: "crimson"}).fillna("grey")
    fig = go.Figure(go.Scatter(x=table["cycle"], y=table["answer"], mode="lines+markers+text",
                               text=table["correct"].map({True: "right", False: "wrong"}).fillna(""),
                               textposition="top center", marker={"color": list(colour), "size": 12},
                               line={"color": "lightgrey"}, name="answer",
                               customdata=table["tokens_so_far"],
                               hovertemplate="cycle %{x}: answer %{y}<br>%{customdata} tokens so far"))
    if result.expected is not None:
        fig.add_hline(y=result.expected, line_dash="dot", annotation_text=f"expected {result.expected}")
    return fig.update_layout(height=300, xaxis_title="cycle", yaxis_title="answer after the cycle",
                             xaxis={"dtick": 1}, margin={"t": 30})


def cycle_accuracy(batch: BatchResult) -> pd.DataFrame:
    """Per RC setting and cycle k: accuracy of the answer after cycle k (a run that stopped earlier, on a total
    budget, keeps its last answer), its Wilson 95% interval, and the mean generated tokens spent by then."""
    rows = []
    for label in dict.fromkeys(r.label for r in batch.rows if r.cycle_answers):
        runs = [r for r in batch.rows if r.label == label and r.correct is not None]
        for k in range(1, max((len(r.cycle_answers) for r in runs), default=0) + 1):
            right = sum(bool(r.cycle_correct[min(k, len(r.cycle_answers)) - 1]) for r in runs)
            lo, hi = wilson_interval(right, len(runs))
            tokens = [r.cycle_tokens[min(k, len(r.cycle_tokens)) - 1] for r in runs]
            rows.append({"label": label, "cycle": k, "problems": len(runs), "accuracy": right / len(runs),
                         "low": lo, "high": hi, "mean_tokens": sum(tokens) / len(tokens)})
    return pd.DataFrame(rows, columns=["label", "cycle", "problems", "accuracy", "low", "high", "mean_tokens"])


def accuracy_by_cycle(batch: BatchResult) -> go.Figure:
    """Accuracy against cycle index and against generated tokens for each RC setting; every other setting of the
    batch (plain decoding at RC's total budget among them) as a reference: a dashed line on the left, a point at
    its mean tokens on the right. Bars: Wilson 95% intervals."""
    frame = cycle_accuracy(batch)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("by cycle", "by generated tokens"), shared_yaxes=True)
    if frame.empty:
        fig.add_annotation(text="No RC runs in this batch", showarrow=False)
        return fig.update_layout(height=320)
    for label, part in frame.groupby("label", sort=False):
        error = {"type": "data", "symmetric": False, "array": part["high"] - part["accuracy"],
                 "arrayminus": part["accuracy"] - part["low"]}
        fig.add_trace(go.Scatter(x=part["cycle"], y=part["accuracy"], error_y=error, mode="lines+markers",
                                 name=label, legendgroup=label), row=1, col=1)
        fig.add_trace(go.Scatter(x=part["mean_tokens"], y=part["accuracy"], error_y=error, mode="lines+markers",
                                 name=label, legendgroup=label, showlegend=False), row=1, col=2)
    others = [s for s in batch.summary() if s["label"] not in set(frame["label"]) and s["accuracy"] is not None]
    for s in others:
        lo, hi = wilson_interval(round(s["accuracy"] * s["checked"]), s["checked"])
        fig.add_hline(y=s["accuracy"], line_dash="dash", row=1, col=1, annotation_text=s["label"],
                      annotation_position="bottom right")
        fig.add_trace(go.Scatter(x=[s["mean_tokens"]], y=[s["accuracy"]], mode="markers", marker_symbol="diamond",
                                 marker_size=11, name=s["label"],
                                 error_y={"type": "data", "symmetric": False, "array": [hi - s["accuracy"]],
                                          "arrayminus": [s["accuracy"] - lo]}), row=1, col=2)
    fig.update_xaxes(title_text="cycle", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="mean generated tokens (summaries included)", row=1, col=2)
    fig.update_yaxes(title_text="accuracy", range=[0, 1.05], row=1, col=1)
    return fig.update_layout(height=360, margin={"t": 40})
