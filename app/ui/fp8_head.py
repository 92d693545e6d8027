"""FP8 page drill-down: a clicked head (or layer) -> its bound beside the histogram of its observed logits."""
from __future__ import annotations

import streamlit as st

from app.figures.clickable import HEAD
from app.figures.fp8 import head_histogram
from app.ui.drilldown import Clicked, Drilldown, within
from app.ui.prepared_drilldowns import prepare_drilldowns
from app.ui.run import run_verb
from backend.fp8 import BoundsConfig
from backend.fp8.head import HeadConfig, head, head_verb, store_heads

FP8_HEAD = Drilldown("fp8-head", (HEAD,))  # a head of the heatmap, or a layer's largest-bound head


def head_drilldown(handle, config: BoundsConfig, result, charts: tuple[Clicked, ...]) -> None:
    """Below the charts: the picked head's numbers and histogram, then every head's prepared (one pass, stored) so
    the next click is a store read."""
    _open(handle, config, result, charts)
    layers, heads = result.bound.shape
    every = [HeadConfig(layer, h, config) for layer in range(layers) for h in range(heads)]
    prepare_drilldowns(f"fp8-head-prepare-{handle.fingerprint}-{hash(config)}", f"the {len(every)} heads",
                       lambda progress: store_heads(handle, every, progress),
                       stored=lambda: head_verb.all_stored(handle, every))


def _open(handle, config: BoundsConfig, result, charts: tuple[Clicked, ...]) -> None:
    picked = FP8_HEAD.pick_or_hint(*charts, fits=within(*result.bound.shape),  # None for another model's pick
                                   hint="Click a head on the heatmap (or a layer on the per-layer chart) to see its "
                                        "bound beside the distribution of its observed logits.")
    if picked is None:
        return
    layer, h = picked.values
    st.subheader(f"Layer {layer}, head {h}")
    done = run_verb(lambda progress: head(handle, HeadConfig(layer, h, config), progress), label=f"Head {layer}.{h}")
    if done is None:
        return
    r = done.value
    m = st.columns(4)
    m[0].metric("Guaranteed bound", f"{r.bound:.4g}", help=f"rank-aware {r.bound_rank_aware:.4g}, rotation-safe "
                f"{r.bound_rotation_safe:.4g}; sigma {r.sigma:.4g}")
    m[1].metric("Layer bound (sets the scale)", f"{r.layer_bound:.4g}")
    m[2].metric("Observed max |S|", f"{r.observed_max:.4g}" if r.n_logits else "—",
                help=f"99th percentile of |S| {r.q99_abs:.4g}; mean {r.mean:.3g}, std {r.std:.3g}")
    m[3].metric("Utilisation", f"{100 * r.utilisation:.2f} %" if r.n_logits else "—")
    st.plotly_chart(head_histogram(r), width="stretch", key="fp8-head-hist")
