"""Figures of the Disagreement page's Learnability view: the clustered gradient-similarity heatmap, each example's
mean similarity to the rest by category, and the per-example table."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

COLOURS = {"easy": "#9e9e9e", "learned": "#1f77b4", "unlearnable": "#d62728"}


def similarity_heatmap(result) -> go.Figure:
    """Cosine similarity of the examples' gradients `[n, n]`, rows and columns in clustering order, each axis label
    naming the example and its category."""
    order = np.asarray(result.order, dtype=int)
    labels = [f"{result.records[i].problem_id} ({result.categories[i]})" for i in order]
    matrix = np.asarray(result.similarity)[np.ix_(order, order)]
    bound = float(np.max(np.abs(matrix - np.eye(len(order))))) if len(order) > 1 else 1.0
    fig = go.Figure(go.Heatmap(z=matrix, x=labels, y=labels, colorscale="RdBu", zmid=0, zmin=-bound, zmax=bound,
                               colorbar_title="cosine"))
    fig.update_layout(height=560, margin=dict(t=30, b=10), xaxis_showticklabels=len(order) <= 40,
                      yaxis_showticklabels=len(order) <= 40, yaxis_autorange="reversed",
                      title="Gradient cosine similarity (clustered; the diagonal is 1)")
    return fig


def mean_similarity_strip(result) -> go.Figure:
    """Each example's mean similarity to the rest, one column per category (box plus the points)."""
    frame = examples_table(result)
    fig = px.box(frame, x="category", y="mean similarity to the rest", color="category", points="all",
                 category_orders={"category": list(COLOURS)}, color_discrete_map=COLOURS,
                 hover_data=["problem", "question"])
    fig.update_layout(height=380, margin=dict(t=30, b=10), showlegend=False)
    return fig


def examples_table(result) -> pd.DataFrame:
    return pd.DataFrame([{"problem": r.problem_id, "category": r.category, "question": r.question,
                          "answer": r.answer, "base answered": r.base_answer, "reasoning answered": r.reasoning_answer,
                          "loss (nats/token)": round(r.loss, 4), "gradient norm": round(r.gradient_norm, 4),
                          "mean similarity to the rest": round(float(m), 4)}
                         for r, m in zip(result.records, result.mean_similarity)])


def beyond_loss_line(result) -> str:
    """One sentence: each group's median loss, and whether similarity predicts unlearnability once the example's
    loss is known (the confound)."""
    from backend.disagreement.learnability_stats import beyond_loss

    kinds = np.array(result.categories)
    losses = np.array([r.loss for r in result.records])
    keep = np.isin(kinds, ("learned", "unlearnable"))
    test = beyond_loss(np.asarray(result.mean_similarity)[keep], losses[keep], kinds[keep] == "unlearnable")
    if np.isnan(test.p_value):
        return "Similarity beyond the loss: too few unlearnable or learned examples to test (5 of each needed)."
    medians = {kind: float(np.median(losses[kinds == kind])) for kind in ("unlearnable", "learned")}
    return (f"Median loss on the correct solution: unlearnable {medians['unlearnable']:.3f} vs learned "
            f"{medians['learned']:.3f} nats/token. Given the loss, similarity "
            f"{'adds to the prediction' if test.p_value < 0.05 else 'adds nothing detectable'}: logistic regression "
            f"coefficient {test.similarity_coefficient:+.2f} per standard deviation, likelihood-ratio p = "
            f"{test.p_value:.2g} ({test.n} examples).")
