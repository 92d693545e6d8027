"""Figures of input attribution: the prompt with each token shaded by its score (one target), and the targets ×
sources heatmap inseq draws for a continuation. Pure: an AttributionResult -> a plotly figure. Token texts are data
(token_label escapes them); scores are signed, so the colour scale is centred on zero."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.figures.inspect import token_label

PER_ROW = 12  # prompt tokens per row of the shaded prompt: long prompts wrap instead of shrinking to unreadable


def _limit(scores: np.ndarray) -> float:
    finite = np.abs(scores[np.isfinite(scores)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def what(result) -> str:
    """'p' or 'logit', as the captions and titles name f."""
    return "p" if result.function == "probability" else "logit"


def prompt_figure(result) -> go.Figure:
    """The sources wrapped in rows of PER_ROW cells, each cell its token written out and shaded by its score for
    the first target; hover gives the exact score."""
    scores = result.scores[0]
    n = len(result.tokens)
    rows = -(-n // PER_ROW)
    z = np.full((rows, PER_ROW), np.nan)
    text = [[""] * PER_ROW for _ in range(rows)]
    hover = [[""] * PER_ROW for _ in range(rows)]
    for i, (token, score) in enumerate(zip(result.tokens, scores)):
        r, c = divmod(i, PER_ROW)
        z[r, c], text[r][c] = score, token_label(token)
        hover[r][c] = f"token {i}: {token_label(token)}<br>score {score:+.4g}"
    limit = _limit(scores)
    fig = go.Figure(go.Heatmap(z=z, text=text, texttemplate="%{text}", textfont=dict(size=14), customdata=hover,
                               hovertemplate="%{customdata}<extra></extra>", colorscale="RdBu", zmid=0,
                               zmin=-limit, zmax=limit, xgap=3, ygap=3, colorbar=dict(title="score")))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, autorange="reversed")
    title = f"Attribution of {what(result)}({token_label(result.targets[0])}) to each token"
    return fig.update_layout(height=90 + 46 * rows, margin=dict(t=40, b=10, l=10), title=title,
                             plot_bgcolor="rgba(0,0,0,0)")


def matrix_figure(result) -> go.Figure:
    """Targets (rows, in generation order) × sources (columns): each generated token's attribution to the prompt and
    to the tokens generated before it; blank where the source comes after the target."""
    n_targets, n_sources = result.scores.shape
    sources = [token_label(t) for t in result.tokens]
    targets = [token_label(t) for t in result.targets]
    hover = [[f"{targets[i]} ← {sources[j]}<br>score {result.scores[i, j]:+.4g}" if np.isfinite(result.scores[i, j])
              else "" for j in range(n_sources)] for i in range(n_targets)]
    limit = _limit(result.scores)
    fig = go.Figure(go.Heatmap(z=result.scores, x=list(range(n_sources)), y=list(range(n_targets)), colorscale="RdBu",
                               zmid=0, zmin=-limit, zmax=limit, customdata=hover, xgap=1, ygap=1,
                               hovertemplate="%{customdata}<extra></extra>", colorbar=dict(title="score")))
    fig.update_xaxes(tickmode="array", tickvals=list(range(n_sources)), ticktext=sources, tickfont=dict(size=12),
                     title="source (prompt, then the tokens generated so far)")
    fig.update_yaxes(tickmode="array", tickvals=list(range(n_targets)), ticktext=targets, tickfont=dict(size=12),
                     autorange="reversed", title="generated token")
    fig.add_vline(x=result.n_prompt - 0.5, line=dict(color="#444", dash="dot", width=1))
    return fig.update_layout(height=max(260, 24 * n_targets + 180), margin=dict(t=40, b=10),
                             title=f"Each generated token's {what(result)} attributed to what came before it")


def attribution_figure(result) -> go.Figure:
    """The shaded prompt for one target, the source × target heatmap for a continuation."""
    return prompt_figure(result) if len(result.targets) == 1 else matrix_figure(result)
