"""The Inspect page's whole-computation tabs: the contribution graph (click an edge: the head(s) behind it; click
a state: its lens and what the block before it promoted and suppressed) and every head at once (scores, grid)."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app.figures.inspect import effects_frame, pattern_figure
from app.figures.clickable import HEAD
from app.figures.inspect_graph import EDGE, NODE, graph_figure, grid_figure, scores_figure
from app.ui.drilldown import Drilldown, clickable_chart, within
from app.ui.params import checkbox_for, number_for, select_for, slider_for
from app.ui.prepared_drilldowns import prepare_drilldowns
from app.ui.run import ASK, run_verb
from app.ui.text import literal
from backend.internals import (GraphConfig, GridConfig, HeadScoresConfig, NodeConfig, drilldowns_stored, graph, grid,
                               graph_drilldowns, head_scores, node, store_drilldowns)

GRAPH_ITEM = Drilldown("inspect-graph", (NODE, EDGE))  # in the context of (prompt, position, per_head) drawn
SCORED_HEAD = Drilldown("inspect-heads-map", (HEAD,))  # a click opens that head in the grid below
SCORE_LABELS = {"previous": "previous token", "duplicate": "duplicate token", "induction": "induction",
                "sink": "first token (sink)"}


def node_drilldown(handle, prompt: str, layer: int, position: int, stage: str) -> None:
    where = "after the attention of layer " + str(layer - 1) if stage == "mid" else (
        "the embedding" if layer == 0 else f"after layer {layer - 1}")
    st.subheader(f"State {where}, position {position}")
    computed = run_verb(node, handle, NodeConfig(prompt=prompt, layer=layer, position=position, stage=stage),
                        label="State drill-down")
    if computed is None:
        return
    result = computed.value
    st.caption(f"{literal(repr(result.tokens[result.position]))} at position {result.position}: the state read out "
               "as the model reads its last one (logit lens), and what the " + (
                   f"{result.writer} just before it wrote (|write| = {result.write_norm:.3g}), through the final norm "
                   "and the unembedding." if result.writer else "embedding holds (no block wrote it yet)."))
    lens_col, up_col, down_col = st.columns(3)
    lens_col.markdown("**Logit lens (top-k)**")
    frame = effects_frame(result.lens).rename(columns={"logit effect": "probability"})
    lens_col.dataframe(frame, hide_index=True, width="stretch")
    if result.writer:
        up_col.markdown(f"**Promoted by the {result.writer}**")
        up_col.dataframe(effects_frame(result.promoted), hide_index=True, width="stretch")
        down_col.markdown(f"**Suppressed by the {result.writer}**")
        down_col.dataframe(effects_frame(result.suppressed), hide_index=True, width="stretch")


def edge_drilldown(result, index: int, open_head: Callable[[int, int, int], None]) -> None:
    if index >= len(result.edges):
        return
    edge = result.edges[index]
    source, target = result.tokens[edge.source.position], result.tokens[edge.target.position]
    if edge.kind != "attn":
        st.info(f"A {'MLP' if edge.kind == 'ffn' else 'residual'} edge at position {edge.target.position} "
                f"({literal(repr(target))}): click a state to read its lens and what the block wrote.")
        return
    block = edge.target.layer - 1
    if edge.head is not None:
        head_index = edge.head
    else:
        ranked = sorted(range(len(edge.heads)), key=lambda h: -edge.heads[h])
        head_index = st.selectbox(
            f"Heads carrying {literal(repr(source))} → {literal(repr(target))} at layer {block} (share "
            f"{edge.weight:.3f})", ranked, format_func=lambda h: f"head {h}: share {edge.heads[h]:.3f}",
            key=f"inspect-graph-edge-head-{block}-{edge.source.position}-{edge.target.position}")
    open_head(block, int(head_index), edge.target.position)


def graph_tab(handle, prompt: str, position: int, open_head: Callable[[int, int, int], None]) -> None:
    c1, c2 = st.columns([3, 1])
    threshold = slider_for(GraphConfig, "threshold", "Edge threshold (share of the state it enters)", container=c1,
                           min_value=0.01, max_value=0.5, step=0.01, key="inspect-graph-threshold")
    per_head = checkbox_for(GraphConfig, "per_head", "One edge per head", container=c2, key="inspect-graph-per-head")
    config = GraphConfig(prompt=prompt, position=position, threshold=float(threshold), per_head=bool(per_head))
    computed = run_verb(graph, handle, config, label="Contribution graph", when=ASK)
    if computed is None:
        return
    result = computed.value
    st.caption(f"How the prediction at position {result.position} ({literal(repr(result.tokens[result.position]))}) "
               f"is built: {len(result.nodes)} residual states and {len(result.edges)} edges holding at least "
               f"{result.threshold:g} of the state they enter (Ferrando & Voita 2024, information flow routes). "
               "Blue: attention (one edge per " + ("head" if result.per_head else "source position") + "), red: MLP, "
               "grey: residual; wider is a larger share. Click an edge for the head behind it, a state for its logit "
               "lens.")
    clicked = clickable_chart(graph_figure(result), key="inspect-graph-map")
    pick = GRAPH_ITEM.pick(clicked, context=(prompt, result.position, result.per_head))
    if pick is None:
        st.info("Click an edge to open the head behind it, or a state to read its lens.")
    elif pick.kind == NODE.kind:
        node_drilldown(handle, prompt, *pick.values)
    else:
        edge_drilldown(result, *pick.values, open_head)
    wanted = graph_drilldowns(prompt, result, handle.info.n_heads)
    prepare_drilldowns(f"inspect-graph-prepare-{handle.fingerprint}-{hash(wanted)}",
                       f"the graph's {len(wanted.nodes)} states and {len(wanted.heads)} heads",
                       lambda progress: store_drilldowns(handle, wanted, progress),
                       stored=lambda: drilldowns_stored(handle, wanted))


def _grids(handle, configs: tuple[GridConfig, ...], progress) -> None:
    """Each layer's grid of heads, stored under the key a click on one of its heads reads."""
    for i, config in enumerate(configs):
        progress(i / len(configs), f"layer {config.layer}")
        grid(handle, config)


def heads_tab(handle, prompt: str, n_layers: int, n_heads: int) -> None:
    c1, c2, c3 = st.columns([2, 2, 1])
    score = select_for(HeadScoresConfig, "score", "Score", labels=SCORE_LABELS, container=c1,
                       key="inspect-heads-score")
    induction = c2.toggle("Test for induction: random tokens repeated twice", key="inspect-heads-random",
                          persist_state="session", help="Scores and patterns on a random sequence written twice "
                          "instead of the prompt: induction heads look at what followed the token's first copy.")
    repeat = number_for(HeadScoresConfig, "repeat", "Random length", container=c3, min_value=4, value=20,
                        key="inspect-heads-repeat") if induction else 0
    computed = run_verb(head_scores, handle, HeadScoresConfig(prompt=prompt, score=score, repeat=repeat),
                        label="Head scores", when=ASK)
    if computed is not None:
        result = computed.value
        top = divmod(int(result.scores.argmax()), n_heads)
        st.caption(f"Mean attention to each query's {SCORE_LABELS[score]} target over {result.queries} positions. "
                   f"Highest: L{top[0]}H{top[1]} ({result.scores[top]:.3f}). Click a head to draw its layer.")
        clicked = clickable_chart(scores_figure(result), key="inspect-heads-map")
        picked = SCORED_HEAD.new_pick(clicked, fits=within(n_layers, n_heads))
        if picked is not None:  # its layer's grid, that head open (once: the widgets are the user's after)
            st.session_state["inspect-grid-top"] = False
            st.session_state["inspect-grid-layer"], st.session_state["inspect-grid-head"] = picked.values
        # what a click on any head opens, its layer's grid: every layer's prepared after the map (a forward each)
        every = tuple(GridConfig(prompt=prompt, layer=layer, repeat=repeat) for layer in range(n_layers))
        prepare_drilldowns(f"inspect-grids-prepare-{handle.fingerprint}-{hash(every)}", f"the {n_layers} layers' heads",
                           lambda progress: _grids(handle, every, progress),
                           stored=lambda: grid.all_stored(handle, every))
    c1, c2 = st.columns(2)
    top = c1.toggle("Grid of the highest-scoring heads (of every layer)", key="inspect-grid-top",
                    persist_state="session")
    layer = number_for(GridConfig, "layer", "Layer drawn", max_value=n_layers - 1, key="inspect-grid-layer",
                       container=c2, disabled=top)
    config = GridConfig(prompt=prompt, layer=layer, repeat=repeat, score=score if top else "")
    computed = run_verb(grid, handle, config, label="Heads' patterns", when=ASK)
    if computed is None:
        return
    result = computed.value
    st.plotly_chart(grid_figure(result), width="stretch", key="inspect-grid")
    names = [f"L{lay}H{h}" for lay, h in result.heads]
    chosen = st.segmented_control("Open a head", list(range(len(names))), format_func=lambda i: names[i],
                                  key="inspect-grid-head", persist_state="session")
    if chosen is not None and chosen < len(names):
        st.plotly_chart(pattern_figure(result.tokens, result.patterns[chosen], f"Head {names[chosen]}"),
                        width="stretch", key="inspect-grid-open")
