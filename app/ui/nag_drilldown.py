"""NAG page: the drill-down under the graph and the profile heatmap. A click on a node or a cell chooses a neuron;
the section reads it with `backend.nag.neuron` over the pool's first documents."""
from __future__ import annotations

import itertools

import pandas as pd
import streamlit as st

from app.figures.nag_neuron import activation_histogram, contexts_html, logit_effects
from app.figures.nag import NEURON
from app.ui.drilldown import Clicked, Drilldown, within
from app.ui.guarded import guarded
from app.ui.run import run_verb
from backend.corpus.documents import iter_documents
from backend.nag.neuron import NeuronConfig, neuron_detail

NAG_NEURON = Drilldown("nag-drill-neuron", (NEURON,))  # one pick for the graph and the profile


def neuron_drilldown(handle, chart: Clicked, pool, pool_name, target_sets, rank_config, key: str) -> None:
    """`key` names this chart's widgets (the graph and the profile tabs each have one)."""
    chosen = NAG_NEURON.pick_or_hint(chart, fits=within(handle.info.n_layers, handle.info.intermediate_size),
                                     hint="Click a neuron to open it: its top-activating contexts in the pool, its "
                                          "activation histogram, the tokens its output promotes and the targets "
                                          "where it fires.")
    if chosen is None:
        return
    layer, neuron = chosen.values
    st.markdown(f"#### Neuron L{layer}.N{neuron}")
    config = NeuronConfig(layer=layer, neuron=neuron, impact=rank_config.impact, top_k=rank_config.top_k,
                          max_length=rank_config.max_length)
    docs = guarded(lambda: list(itertools.islice(iter_documents(pool, name=pool_name), config.max_docs)))
    if docs is None:
        return
    out = run_verb(lambda p: neuron_detail(handle, config, docs, target_sets, p),
                   label=f"Opening neuron L{layer}.N{neuron}")
    if out is None:
        return
    detail = out.value
    st.markdown(f"**Top-activating contexts** (first {detail.scanned_docs} pool documents, one context each, by "
                "|up-projection output|, the per-token quantity NAG's impact averages)")
    st.markdown(contexts_html(detail), unsafe_allow_html=True)
    left, right = st.columns(2)
    left.plotly_chart(activation_histogram(detail), width="stretch", key=f"{key}-hist")
    right.plotly_chart(logit_effects(detail), width="stretch", key=f"{key}-logits")
    if detail.targets:
        st.markdown("**Where it fires among the targets**")
        st.dataframe(pd.DataFrame([{"target": t.name, "documents": t.documents,
                                    "in their layer top-K": f"{t.in_top_k:.0%}", "profile weight": round(t.weight, 4)}
                                   for t in detail.targets]), hide_index=True, width="stretch")
