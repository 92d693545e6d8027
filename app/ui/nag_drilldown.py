"""NAG page: the drill-down under the graph and the profile heatmap. A click on a node or a cell chooses a neuron;
the section reads it with `backend.nag.neuron` over the pool's first documents. The drill-downs of every neuron of
the graph shown are prepared right after it (`app.ui.prepared_drilldowns`), so a click reads the store."""
from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from app.figures.nag_neuron import activation_histogram, contexts_html, logit_effects
from app.figures.nag import NEURON
from app.ui.drilldown import Clicked, Drilldown, within
from app.ui.guarded import guarded
from app.ui.prepared_drilldowns import after_preparation, prepare_drilldowns
from app.ui.run import run_verb
from backend.corpus.documents import iter_documents
from backend.nag.graph import GraphConfig
from backend.nag.neuron import NeuronConfig, ScannedDocuments, neuron_detail, neuron_details, neuron_verb

NAG_NEURON = Drilldown("nag-drill-neuron", (NEURON,))  # one pick for the graph and the profile
# The Graph tab's first view, sparser than the CLI's defaults: a readable graph at first sight (about 60 nodes), a
# slider for more. Its layers are all of the model's (`first_graph`); the reference set ships the drill-downs of its
# nodes on the embedded default model (scripts/mt_nag_drilldowns.py).
FIRST_GRAPH = GraphConfig(max_nodes_per_layer=8, min_edge_weight=0.25, max_nodes=60)


def first_graph(n_layers: int) -> GraphConfig:
    return dataclasses.replace(FIRST_GRAPH, layer_min=0, layer_max=n_layers - 1)


def neuron_config(layer: int, neuron: int, rank_config) -> NeuronConfig:
    return NeuronConfig(layer=layer, neuron=neuron, impact=rank_config.impact, top_k=rank_config.top_k,
                        max_length=rank_config.max_length)


def neuron_drilldown(handle, chart: Clicked, pool, pool_name, target_sets, rank_config, key: str,
                     shown: Sequence[tuple[int, int]] = ()) -> None:
    """`key` names this chart's widgets (the graph and the profile tabs each have one); `shown`: the (layer, neuron)
    of every node of the chart, whose drill-downs are prepared right after it (a click then reads the store)."""
    docs, prepared = None, ""
    if shown:
        docs = guarded(lambda: list(itertools.islice(iter_documents(pool, name=pool_name),
                                                     NeuronConfig().max_docs)))
        if docs is not None:
            configs = [neuron_config(int(layer), int(neuron), rank_config) for layer, neuron in shown]
            view = (tuple(configs), str(pool), pool_name, tuple((t.name, t.digest) for t in target_sets))
            prepared = f"{key}-prepare-{handle.fingerprint}-{hash(view)}"
            # stored: their keys read (every rerun asks; decoding 900 stored drill-downs took ~2 s a rerun)
            scanned = ScannedDocuments(handle, tuple(docs[:NeuronConfig().max_docs]), tuple(target_sets))
            prepare_drilldowns(prepared, f"the {len(configs)} neurons shown",
                               lambda p: neuron_details(handle, configs, docs, target_sets, p),
                               stored=lambda: neuron_verb.all_stored(scanned, configs))
    chosen = NAG_NEURON.pick_or_hint(chart, fits=within(handle.info.n_layers, handle.info.intermediate_size),
                                     hint="Click a neuron to open it: its top-activating contexts in the pool, its "
                                          "activation histogram, the tokens its output promotes and the targets "
                                          "where it fires.")
    if chosen is None:
        return
    layer, neuron = chosen.values
    st.markdown(f"#### Neuron L{layer}.N{neuron}")
    config = neuron_config(layer, neuron, rank_config)
    docs = docs or guarded(lambda: list(itertools.islice(iter_documents(pool, name=pool_name), config.max_docs)))
    if docs is None:
        return
    out = run_verb(after_preparation(prepared, lambda p: neuron_detail(handle, config, docs, target_sets, p)),
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
