"""NAG figures: pure functions from backend results to plotly figures."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.figures.clickable import Pickable, cell_click_layer
from app.ui.text import plot_label
from backend.nag.deactivate import Deactivation
from backend.nag.evaluate import Comparison
from backend.nag.graph import NagGraph
from backend.nag.rank import Ranking
from backend.nag.scorers import SCORERS
from backend.nag.targets import TargetProfiles



def distance_histogram(ranking: Ranking) -> go.Figure:
    """Distance to the closest target, one overlaid histogram per pool domain; the budget cut as a line."""
    distance = ranking.distance.min(axis=0)
    groups = sorted(set(ranking.domains)) if ranking.labelled else [""]
    fig = go.Figure()
    for group in groups:
        mask = np.array([d == group for d in ranking.domains]) if ranking.labelled else slice(None)
        fig.add_histogram(x=distance[mask], name=plot_label(group or "pool"), opacity=0.6, nbinsx=40)
    chosen = ranking.selected_by >= 0
    if chosen.any():
        fig.add_vline(x=float(distance[chosen].max()), line_dash="dash",
                      annotation_text=f"selected ({int(chosen.sum())} docs)")
    fig.update_layout(barmode="overlay", title=f"Distance to the target profile — {plot_label(ranking.model)}",
                      xaxis_title="distance = 1 − similarity", yaxis_title="documents", legend_title="domain")
    return fig


NEURON = Pickable("neuron", ("layer", "neuron"))  # what a click on the profile or the graph opens
PROFILE_TOP = 30  # the heaviest neurons per layer the profile heatmap shows


def profile_neurons(profiles: TargetProfiles, target: int = 0, top: int = PROFILE_TOP) -> np.ndarray:
    """[n_layers, top] the neuron ids the profile heatmap shows: each layer's heaviest, heaviest first (the page
    prepares their drill-downs; the reference set ships them for the first view)."""
    return np.argsort(-profiles.weights[target], axis=1, kind="stable")[:, :top]


def profile_heatmap(profiles: TargetProfiles, target: int = 0, top: int = PROFILE_TOP) -> go.Figure:
    """Per layer, the weights of its `top` heaviest profile neurons (x = rank, hover = neuron id)."""
    weights = profiles.weights[target]
    order = profile_neurons(profiles, target, top)
    z = np.take_along_axis(weights, order, axis=1)
    text = [[f"layer {l}, neuron {n}: {w:.3f}" for n, w in zip(order[l], z[l])] for l in range(len(order))]
    fig = go.Figure(go.Heatmap(z=z, x=np.arange(1, z.shape[1] + 1), y=np.arange(z.shape[0]), text=text,
                               hoverinfo="text", colorscale="Viridis", colorbar={"title": "weight"}))
    rows, ranks = np.divmod(np.arange(z.size), z.shape[1])  # clicks open the neuron
    fig.add_trace(cell_click_layer(ranks + 1, rows, NEURON.rows(rows, order.ravel()),
                                   "layer %{customdata[1]}, neuron %{customdata[2]}<br>click to open<extra></extra>",
                                   size=10))
    fig.update_layout(title=f"Profile of {plot_label(repr(profiles.names[target]))}: heaviest neurons per layer "
                            f"({len(profiles.doc_ids[target])} target docs, K={profiles.top_k})",
                      xaxis_title="neuron rank within layer", yaxis_title="layer", yaxis_autorange="reversed")
    return fig


def profile_concentration(profiles: TargetProfiles, top: int = 20) -> go.Figure:
    """Share of each layer's profile mass held by its `top` heaviest neurons, one line per target."""
    fig = go.Figure()
    for m, name in enumerate(profiles.names):
        mass = -np.sort(-profiles.weights[m], axis=1)[:, :top].sum(axis=1)
        fig.add_scatter(x=np.arange(len(mass)), y=mass, mode="lines+markers", name=plot_label(name))
    fig.update_layout(title=f"Profile mass in the top {top} neurons per layer", xaxis_title="layer",
                      yaxis_title="share of the layer's profile", yaxis_range=[0, 1.02])
    return fig


def graph_figure(graph: NagGraph) -> go.Figure:
    """The NAG in a layered networkx layout: node size = profile weight, edge width = co-activation."""
    fig = go.Figure()
    if len(graph.layers) == 0:
        fig.update_layout(title="No neuron passes the filters")
        return fig
    xy = graph.positions()
    if len(graph.edge_src):
        bins = np.quantile(graph.edge_weights, [0, 0.5, 0.8, 1.0])
        for lo, hi, width in zip(bins[:-1], bins[1:], (0.5, 1.5, 3.0)):
            sel = (graph.edge_weights >= lo) & (graph.edge_weights <= hi)
            xs, ys = [], []
            for a, b in zip(graph.edge_src[sel], graph.edge_dst[sel]):
                xs += [xy[a, 0], xy[b, 0], None]
                ys += [xy[a, 1], xy[b, 1], None]
            fig.add_scatter(x=xs, y=ys, mode="lines", line={"width": width, "color": "rgba(120,120,160,0.35)"},
                            hoverinfo="skip", showlegend=False)
    size = 6 + 22 * graph.weights / max(float(graph.weights.max()), 1e-12)
    fig.add_scatter(x=xy[:, 0], y=xy[:, 1], mode="markers", showlegend=False,
                    marker={"size": size, "color": graph.weights, "colorscale": "Plasma", "showscale": True,
                            "colorbar": {"title": "weight"}, "line": {"width": 0.5, "color": "white"}},
                    text=[f"layer {l}, neuron {n}<br>weight {w:.3f}<br>click to open" for l, n, w in
                          zip(graph.layers, graph.neurons, graph.weights)], hoverinfo="text",
                    customdata=NEURON.rows(graph.layers, graph.neurons))
    layers = sorted(set(graph.layers.tolist()))
    ticks = [float(xy[graph.layers == l, 0][0]) for l in layers]
    fig.update_layout(title=f"Neuron-activated graph of {plot_label(repr(graph.target))} ({len(graph.layers)} neurons, "
                            f"{len(graph.edge_src)} co-activation edges)",
                      xaxis={"tickvals": ticks, "ticktext": [str(l) for l in layers], "title": "layer"},
                      yaxis={"visible": False}, height=520)
    return fig


def precision_figure(comparison: Comparison) -> go.Figure:
    fig = go.Figure()
    for method, row in zip(comparison.methods, comparison.precision):
        fig.add_scatter(x=list(comparison.ks), y=row, mode="lines+markers", name=SCORERS.get(method).label)
    fig.update_layout(title=f"Precision@k for target {plot_label(', '.join(comparison.targets))} — {plot_label(comparison.model)}",
                      xaxis_title="k (top-ranked documents)", yaxis_title="share from the target domain(s)",
                      yaxis_range=[0, 1.05])
    return fig


def deactivation_figure(result: Deactivation) -> go.Figure:
    """Loss increase per held-out domain after zeroing NAG neurons vs random neurons (mean ± sd of draws)."""
    rand = result.random - result.base[None, :]
    fig = go.Figure()
    fig.add_bar(x=[plot_label(d) for d in result.domains], y=result.nag_increase, name=f"NAG neurons ({result.nag_neurons.size})")
    fig.add_bar(x=[plot_label(d) for d in result.domains], y=rand.mean(axis=0) if len(rand) else np.zeros(len(result.domains)),
                error_y={"type": "data", "array": rand.std(axis=0) if len(rand) else None},
                name=f"random neurons (mean of {len(rand)})")
    fig.update_layout(barmode="group", title=f"Loss increase after zeroing {result.share:.2%} of MLP neurons "
                                             f"(target {plot_label(repr(result.target))}) — {plot_label(result.model)}",
                      xaxis_title="held-out domain", yaxis_title="Δ loss (nats/token)")
    return fig
