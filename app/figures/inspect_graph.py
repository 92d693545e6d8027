"""Figures of the whole-computation views: the contribution graph (positions x layers, tokens along the bottom,
every edge and state clickable), the head-score map and the all-heads grid. Pure: backend results -> figures.

Clicks: Plotly selects markers, not line segments, so each edge gets an invisible marker on its line (its middle,
unless another edge's marker is there: `click_points`); a click picks a state (`NODE`) or an edge (`EDGE`, its index
into result.edges)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.clickable import HEAD, Pickable, grid_click_layer
from app.figures.inspect import token_label

COLOURS = {"attn": "#2166ac", "ffn": "#d6604d", "resid": "#9e9e9e"}
FFN_BEND = 0.18  # an MLP edge joins the same two states as a residual edge: drawn bent to the right of it
SELF_BEND = -0.18  # ... and so does an attention edge from a position to itself: bent to the left
WIDTH_BINS = (0.1, 0.25, 0.5, 1.01)  # edges drawn in a few widths (a Scatter line has one width)
NODE = Pickable("node", ("layer", "position", "stage"), text=("stage",))
EDGE = Pickable("edge", ("edge",))
# Where along its line an edge's click marker sits (0 = source, 1 = target): its middle, else the nearest free spot;
# never nearer its ends (an edge between a block's two states is half a layer, 13 px, long: a marker nearer a state
# than its radius takes that state's clicks, Plotly's hover preferring the smaller marker under the mouse)
CLICK_SPOTS = (0.5, 0.38, 0.62, 0.26, 0.74)


def node_y(layer: int, stage: str) -> float:
    """The state after block l at y = l; the state inside it, after attention, half a layer below."""
    return layer - 0.5 if stage == "mid" else float(layer)


def edge_label(result, edge) -> str:
    tokens = result.tokens
    what = {"attn": f"attention of layer {edge.target.layer - 1}" + ("" if edge.head is None else f", head {edge.head}"),
            "ffn": f"MLP of layer {edge.target.layer - 1}", "resid": "residual"}[edge.kind]
    text = (f"{what}<br>{token_label(tokens[edge.source.position])} (pos {edge.source.position}) → "
            f"{token_label(tokens[edge.target.position])} (pos {edge.target.position})<br>share {edge.weight:.3f}")
    if edge.heads:
        top = np.argsort(edge.heads)[::-1][:3]
        text += "<br>heads: " + ", ".join(f"H{h} {edge.heads[h]:.3f}" for h in top)
    return text


def _path(edge) -> tuple[tuple[float, float], ...]:
    """(start, middle, end) of an edge's line."""
    x0, y0 = edge.source.position, node_y(edge.source.layer, edge.source.stage)
    x1, y1 = edge.target.position, node_y(edge.target.layer, edge.target.stage)
    bend = FFN_BEND if edge.kind == "ffn" else SELF_BEND if edge.kind == "attn" and x0 == x1 else 0.0
    return (x0, y0), ((x0 + x1) / 2 + bend, (y0 + y1) / 2), (x1, y1)


def _along(path: tuple[tuple[float, float], ...], t: float) -> tuple[float, float]:
    """The point at `t` along an edge's line (start -> middle -> end, each half drawn straight)."""
    (xa, ya), (xb, yb) = (path[0], path[1]) if t <= 0.5 else (path[1], path[2])
    f = t / 0.5 if t <= 0.5 else (t - 0.5) / 0.5
    return xa + f * (xb - xa), ya + f * (yb - ya)


def click_points(edges) -> list[tuple[float, float]]:
    """Each edge's click marker: the middle of its line, else the first of CLICK_SPOTS no other marker holds. Two
    edges can share a middle (an attention edge from p - k to p + k and the residual at p; one line per head), and
    of two markers at one spot Plotly's hover picks one: the other edge could not be clicked. A straight vertical
    edge (a residual) is too short for any spot but its middle: those are placed first, then the others, strongest
    first."""
    paths = [_path(edge) for edge in edges]
    fixed = [i for i, path in enumerate(paths) if path[0][0] == path[1][0] == path[2][0]]
    taken, points = set(), {}
    for i in fixed + [i for i in range(len(paths)) if i not in set(fixed)]:
        spots = [_along(paths[i], t) for t in (CLICK_SPOTS[:1] if i in fixed else CLICK_SPOTS)]
        points[i] = next((p for p in spots if _spot(p) not in taken), spots[0])
        taken.add(_spot(points[i]))
    return [points[i] for i in range(len(paths))]


def _spot(point: tuple[float, float]) -> tuple[float, float]:
    return round(point[0], 6), round(point[1], 6)


def graph_figure(result) -> go.Figure:
    """Positions x layers: states as circles (after each block large, after its attention small), edges as lines
    whose width grows with their share; colours: attention blue, MLP red, residual grey."""
    fig = go.Figure()
    for kind, colour in COLOURS.items():
        low = 0.0
        for high in WIDTH_BINS:
            xs, ys = [], []
            for e in result.edges:
                if e.kind == kind and low <= e.weight < high:
                    (x0, y0), (xm, ym), (x1, y1) = _path(e)
                    xs += [x0, xm, x1, None]
                    ys += [y0, ym, y1, None]
            if xs:
                fig.add_scatter(x=xs, y=ys, mode="lines", line=dict(color=colour, width=1 + 8 * low), opacity=0.8,
                                hoverinfo="skip", showlegend=False)
            low = high
    mids = click_points(result.edges)
    if mids:
        fig.add_scatter(x=[m[0] for m in mids], y=[m[1] for m in mids], mode="markers", name="edges",
                        customdata=EDGE.rows(range(len(result.edges))),
                        text=[edge_label(result, e) for e in result.edges],
                        hovertemplate="%{text}<extra>click: the head(s)</extra>", showlegend=False,
                        marker=dict(size=9, color=[COLOURS[e.kind] for e in result.edges], opacity=0.25),
                        selected=dict(marker=dict(opacity=1.0, size=13)), unselected=dict(marker=dict(opacity=0.25)))
    nodes = result.nodes
    names = [("after attention of layer " + str(n.layer - 1)) if n.stage == "mid"
             else ("embedding" if n.layer == 0 else f"after layer {n.layer - 1}") for n in nodes]
    fig.add_scatter(x=[n.position for n in nodes], y=[node_y(n.layer, n.stage) for n in nodes], mode="markers",
                    name="states", customdata=[NODE.encode(n.layer, n.position, n.stage) for n in nodes],
                    text=[f"{name}<br>{token_label(result.tokens[n.position])} (pos {n.position})"
                          for name, n in zip(names, nodes)],
                    hovertemplate="%{text}<extra>click: its lens</extra>", showlegend=False,
                    marker=dict(size=[7 if n.stage == "mid" else 11 for n in nodes], color="#fdfdfd",
                                line=dict(color="#222222", width=1.5)),
                    selected=dict(marker=dict(color="#ffb000")), unselected=dict(marker=dict(opacity=1.0)))
    length = result.position + 1
    fig.update_xaxes(tickmode="array", tickvals=list(range(length)),
                     ticktext=[token_label(t) for t in result.tokens[:length]], range=[-0.7, length - 0.3],
                     title="position (token)")
    fig.update_yaxes(title="layer (0 = embeddings)", range=[-0.7, result.n_layers + 0.7],
                     dtick=1 if result.n_layers <= 16 else 2)
    return fig.update_layout(height=max(420, 26 * result.n_layers + 160), margin=dict(t=40, b=10),
                             clickmode="event+select", dragmode=False, showlegend=False,
                             title=f"Contribution graph into {token_label(result.tokens[result.position])} "
                                   f"(edges ≥ {result.threshold:g})")


def scores_figure(result) -> go.Figure:
    """The L x H score map; each head clickable (`HEAD`)."""
    n_layers, n_heads = result.scores.shape
    fig = go.Figure(go.Heatmap(z=result.scores, x=list(range(n_heads)), y=list(range(n_layers)), zmin=0, zmax=1,
                               colorscale="Viridis", colorbar=dict(title="score"), hoverinfo="skip"))
    fig.add_trace(grid_click_layer(HEAD, n_layers, n_heads, "layer %{customdata[1]} · head %{customdata[2]}"
                                                      "<extra>click: its pattern</extra>",
                                   size=max(8, min(30, int(600 / n_layers)))))
    fig.update_xaxes(title="head", dtick=1)
    fig.update_yaxes(title="layer", autorange="reversed", dtick=1 if n_layers <= 16 else 2)
    return fig.update_layout(height=max(300, 20 * n_layers + 140), margin=dict(t=40, b=10), dragmode=False,
                             clickmode="event+select", title=f"{result.score} score of every head")


def grid_figure(result, columns: int = 5) -> go.Figure:
    """One small pattern per head of the result (a layer's, or the top heads by a score; CircuitsVis'
    attention_heads); hover: query → key and weight."""
    n_heads, length = result.patterns.shape[0], len(result.tokens)
    rows = -(-n_heads // columns)
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[f"L{layer}H{h}" for layer, h in result.heads],
                        horizontal_spacing=0.02, vertical_spacing=0.06)
    pairs = [[f"{token_label(result.tokens[q])} → {token_label(result.tokens[k])}" for k in range(length)]
             for q in range(length)]
    for h in range(n_heads):
        fig.add_trace(go.Heatmap(z=result.patterns[h], zmin=0, zmax=1, colorscale="Viridis", showscale=h == 0,
                                 customdata=pairs, hovertemplate=f"L{result.heads[h][0]}H{result.heads[h][1]}<br>%{{customdata}}<br>%{{z:.3f}}"
                                                                 "<extra></extra>"),
                      row=h // columns + 1, col=h % columns + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False, autorange="reversed")
    return fig.update_layout(height=190 * rows + 60, margin=dict(t=40, b=10),
                             title=(f"Every head of layer {result.layer}" if result.layer >= 0 else
                                    f"The {n_heads} highest-scoring heads") + " (rows: query, columns: key)")
