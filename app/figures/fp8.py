"""FP8 attention bounds: results -> plotly figures (pure functions)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures.axes import log_axis
from app.figures.clickable import HEAD
from app.ui.text import plot_label

HEATMAP_VIEWS = {
    "sigma": ("sigma(W_Q,h W_K,g^T), gains folded", lambda r: r.sigma),
    "bound": ("guaranteed bound on |S_ij| (logits)", lambda r: r.bound),
    "observed": ("observed max |S_ij| on sample texts", lambda r: r.observed),
    "utilisation": ("observed / bound per head", lambda r: r.observed / r.bound),
}


def head_heatmap(result, view: str = "sigma") -> go.Figure:
    """Layer x head heatmap of one of HEATMAP_VIEWS."""
    title, pick = HEATMAP_VIEWS[view]
    z = np.asarray(pick(result), dtype=float)
    n_layers, n_heads = z.shape
    group = n_heads // result.n_kv_heads
    fig = go.Figure(go.Heatmap(z=z, x=list(range(n_heads)), y=list(range(n_layers)), colorscale="Viridis",
                               colorbar={"title": view},
                               customdata=np.tile(np.arange(n_heads) // group, (n_layers, 1)),
                               hovertemplate="layer %{y}, head %{x} (kv %{customdata})<br>%{z:.4g}<extra></extra>"))
    # heatmap cells cannot be selected in Plotly (streamlit#8760): a clear marker on each cell takes the click
    # (a click needs a hover, so the markers carry the cell's hover text and the heatmap none)
    layers, heads = np.divmod(np.arange(n_layers * n_heads), n_heads)
    fig.update_traces(hoverinfo="skip", hovertemplate=None)
    fig.add_scatter(x=heads, y=layers, mode="markers", showlegend=False, name="pick",
                    customdata=HEAD.rows(layers, heads, extras=(heads // group, z.ravel())),
                    marker={"symbol": "square", "size": 14, "color": "rgba(0,0,0,0)"},
                    hovertemplate="layer %{y}, head %{x} (kv %{customdata[3]})<br>%{customdata[4]:.4g}<extra></extra>")
    fig.update_layout(title=f"{title} · {plot_label(result.model)}", xaxis_title="query head", yaxis_title="layer",
                      yaxis_autorange="reversed", height=max(320, 18 * n_layers + 140), clickmode="event+select")
    return fig


def head_histogram(head) -> go.Figure:
    """One head (backend.fp8.head.HeadResult): the histogram of its observed logits S_ij, with the guaranteed bound,
    the layer's bound (what its FP8 scale is set from) and the observed max |S| drawn at +- their value."""
    fig = go.Figure()
    if head.n_logits:
        centres = (head.edges[:-1] + head.edges[1:]) / 2
        fig.add_bar(x=centres, y=head.counts, width=np.diff(head.edges), name="observed S_ij",
                    marker_color="#4C78A8", hovertemplate="S in [%{customdata[0]:.3g}, %{customdata[1]:.3g}): "
                                                          "%{y} logits<extra></extra>",
                    customdata=np.stack([head.edges[:-1], head.edges[1:]], axis=1))
    lines = [(head.bound, "bound", "#d62728", "dash"), (head.layer_bound, "layer bound", "#ff7f0e", "dot")]
    if head.n_logits:
        lines.append((head.observed_max, "observed max |S|", "#2ca02c", "solid"))
    for row, (value, label, colour, dash) in enumerate(lines):
        for sign in (-1, 1):  # no label of its own: add_vline draws a placeholder for a None text
            fig.add_vline(x=sign * value, line_color=colour, line_dash=dash)
        # one row per label, ending at its line: the layer bound sits at the axis's edge (a label to its right was
        # cut off) and the three values can be close (labels at one height overlapped)
        fig.add_annotation(x=value, xref="x", y=1 - 0.09 * row, yref="y domain", xanchor="right", yanchor="top",
                           text=f"{label} {value:.3g}", font_color=colour, showarrow=False,
                           bgcolor="rgba(255,255,255,0.8)")
    utilisation = f" · utilisation {100 * head.utilisation:.2f} %" if head.n_logits else " · no sample texts"
    fig.update_layout(title=f"Layer {head.layer}, head {head.head} (kv {head.kv_head}): {head.n_logits} observed "
                            f"logits{utilisation} · {plot_label(head.model)}",
                      xaxis_title="S_ij (logits)", yaxis_title="count", yaxis=log_axis(head.counts), showlegend=False,
                      bargap=0, height=380, xaxis_range=[-1.05 * head.layer_bound, 1.05 * head.layer_bound])
    return fig


def layer_bounds_figure(result) -> go.Figure:
    """Per layer, on one shared layer axis (one chart to draw): top, the rank-aware and rotation-safe bounds (max
    over heads) against the observed max, log scale; bottom, observed / guaranteed bound, the fraction of the FP8
    range real logits reach (when sample texts were run). A click on a layer picks its head with the largest
    bound, the one that sets the layer's FP8 scale."""
    layers = np.arange(len(result.layer_bound))
    pick = HEAD.rows(layers, np.argmax(result.bound, axis=1))
    observed = bool(np.isfinite(result.observed).any())
    guaranteed = "rotation-safe" if result.rope else "rank-aware"
    titles = (f"bound vs observed ({guaranteed} bound is guaranteed)", "utilisation of the geometry-aware FP8 range")
    rows = 2 if observed else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        row_heights=[0.62, 0.38] if observed else None, subplot_titles=titles[:rows])
    fig.add_scatter(x=layers, y=result.bound_rank_aware.max(axis=1), name="rank-aware bound", mode="lines+markers",
                    customdata=pick, row=1, col=1)
    fig.add_scatter(x=layers, y=result.bound_rotation_safe.max(axis=1), name="rotation-safe bound",
                    mode="lines+markers", line={"dash": "dash"}, customdata=pick, row=1, col=1)
    fig.add_hline(y=result.fp8_max, line_dash="dot", row=1, col=1)
    # by hand: add_hline's own label is placed at y in log space on a log axis, i.e. off the chart
    fig.add_annotation(text=f"{result.fp8_format} max {result.fp8_max:g}", x=0, xref="x domain",
                       y=float(np.log10(result.fp8_max)), yref="y", xanchor="left", yanchor="bottom", showarrow=False)
    fig.update_yaxes(log_axis(result.bound_rank_aware.max(axis=1), result.bound_rotation_safe.max(axis=1),
                              result.fp8_max, result.observed_layer if observed else ()),
                     title_text="|S_ij| (logits)", row=1, col=1)
    if observed:
        fig.add_scatter(x=layers, y=result.observed_layer, name="observed max |S|", mode="lines+markers",
                        customdata=pick, row=1, col=1)
        fig.add_bar(x=layers, y=100 * result.utilisation, name="utilisation", showlegend=False, row=2, col=1,
                    customdata=pick, hovertemplate="layer %{x}: %{y:.2f} %<extra></extra>")
        fig.update_yaxes(title_text="observed / bound (%)", row=2, col=1)
    fig.update_xaxes(title_text="layer", row=rows, col=1)
    return fig.update_layout(title=f"Per layer · {plot_label(result.model)}", height=620 if observed else 420,
                             clickmode="event+select")


def transient_figure(sim) -> go.Figure:
    """Top: amax and the largest |S| each scaling represents (log). Bottom: overflow counts per step."""
    steps = np.arange(len(sim.amax))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.65, 0.35], vertical_spacing=0.08)
    fig.add_scatter(x=steps, y=sim.amax, name="observed amax", mode="lines+markers", row=1, col=1)
    fig.add_scatter(x=steps, y=sim.limit_delayed, name="delayed scaling range", mode="lines",
                    line={"dash": "dash"}, row=1, col=1)
    fig.add_scatter(x=steps, y=sim.limit_geometry, name="geometry-aware range", mode="lines", row=1, col=1)
    fig.add_bar(x=steps, y=sim.overflow_delayed, name="overflows (delayed)", row=2, col=1)
    fig.add_bar(x=steps, y=sim.overflow_geometry, name="overflows (geometry-aware)", row=2, col=1)
    fig.add_vline(x=sim.spike_step, line_dash="dot", annotation_text=f"spike x{sim.spike_factor:g}")
    fig.update_yaxes(log_axis(sim.amax, sim.limit_delayed, sim.limit_geometry), title_text="|S| (logits)", row=1,
                     col=1)
    fig.update_yaxes(title_text="overflows", row=2, col=1)
    fig.update_xaxes(title_text="training step", row=2, col=1)
    fig.update_layout(title=f"Spike transient, layer {sim.layer} ({sim.fp8_format}, history {sim.history_len})"
                            f" · {plot_label(sim.model)}", height=520, barmode="group")
    return fig


def concentration_figure(curves, model: str = "") -> go.Figure:
    """log10 tail bounds vs deviation alpha for the model's d and r = d_h."""
    fig = go.Figure()
    fig.add_scatter(x=curves.alpha, y=curves.log10_rank_aware, mode="lines",
                    name=f"rank-aware exp(-d²α²/(γr)), r={curves.r}")
    fig.add_scatter(x=curves.alpha, y=curves.log10_rank_agnostic, mode="lines", name="rank-agnostic exp(-dα²)",
                    line={"dash": "dash"})
    fig.add_hline(y=curves.target_log10, line_dash="dot", annotation_text=f"1e{curves.target_log10:g}")
    fig.update_layout(title=f"Concentration: d={curves.d}, r={curves.r}, γ={curves.gamma:g} · exponent ratio "
                            f"{curves.exponent_ratio:.1f}× {('· ' + plot_label(model)) if model else ''}",
                      xaxis_title="deviation α", yaxis_title="log10 tail bound",
                      yaxis_range=[max(-20.0, float(curves.log10_rank_aware.min())), 0.5], height=380)
    return fig
