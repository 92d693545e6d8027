"""The drill-downs a computed Inspect map opens, all computed at once and stored per object, so a click on any of
its objects is a store read instead of a forward.

Which objects a map shows, keyed exactly as the page asks for them (pages/inspect.py, app/ui/inspect_graph.py):
- the direct logit attribution map: every head, `HeadConfig(prompt, layer, head, position)` at the map's position;
- the contribution graph: every state, `NodeConfig(prompt, layer, position, stage)`, and behind each attention
  edge the heads of its block at its target position (the edge's own head with one edge per head; otherwise every
  head, as the edge's head picker offers them all).
`store_drilldowns` computes the missing ones with one forward for all heads (`compute_heads`) and one for all
states (`compute_nodes`), stored through the verbs' many-key path (`Verb.many`) under the keys a click reads.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backend.internals.attention import compute_heads
from backend.internals.config import HeadConfig
from backend.internals.graph import GraphResult
from backend.internals.graph_config import NodeConfig
from backend.internals.node import compute_nodes
from backend.internals.verbs import head, node
from backend.progress import Progress, scaled, silent


@dataclass(frozen=True)
class Drilldowns:
    """The drill-down requests of one map: heads and states, each keyed as the page's click asks for it."""

    heads: tuple[HeadConfig, ...] = ()
    nodes: tuple[NodeConfig, ...] = ()

    def __add__(self, other: Drilldowns) -> Drilldowns:
        return Drilldowns(tuple(dict.fromkeys(self.heads + other.heads)),
                          tuple(dict.fromkeys(self.nodes + other.nodes)))

    def __len__(self) -> int:
        return len(self.heads) + len(self.nodes)


@dataclass(frozen=True)
class Stored:
    """What `store_drilldowns` did: requests already in the store, and requests computed now."""

    hits: int
    computed: int

    def to_json(self) -> dict:
        return {"hits": self.hits, "computed": self.computed}


def dla_drilldowns(prompt: str, position: int, n_layers: int, n_heads: int) -> Drilldowns:
    """Every head of the attribution map, opened at the map's position (as typed: -1 stays -1)."""
    return Drilldowns(heads=tuple(HeadConfig(prompt=prompt, layer=layer, head=h, position=position)
                                  for layer in range(n_layers) for h in range(n_heads)))


def graph_drilldowns(prompt: str, graph: GraphResult, n_heads: int) -> Drilldowns:
    """Every state of the graph and the heads behind every attention edge, at the edge's target position."""
    nodes = tuple(NodeConfig(prompt=prompt, layer=n.layer, position=n.position, stage=n.stage) for n in graph.nodes)
    heads: dict[HeadConfig, None] = {}
    for edge in graph.edges:
        if edge.kind != "attn":
            continue
        for h in (edge.head,) if edge.head is not None else range(n_heads):
            heads[HeadConfig(prompt=prompt, layer=edge.target.layer - 1, head=h,
                             position=edge.target.position)] = None
    return Drilldowns(heads=tuple(heads), nodes=nodes)


def drilldowns_stored(handle, wanted: Drilldowns) -> bool:
    """Whether every drill-down of `wanted` is in the store (keys read only)."""
    return head.all_stored(handle, wanted.heads) and node.all_stored(handle, wanted.nodes)


def store_drilldowns(handle, wanted: Drilldowns, progress: Progress = silent) -> Stored:
    """Compute the drill-downs the store lacks (one forward for the heads, one for the states) and store each under
    the key its click reads; the ones already stored are left as they are."""
    model, tokenizer = handle.model, handle.tokenizer
    share = len(wanted.heads) / max(1, len(wanted))

    def heads_of(missing: Sequence[HeadConfig]):
        return compute_heads(model, tokenizer, missing, scaled(progress, 0.0, share))

    def nodes_of(missing: Sequence[NodeConfig]):
        return compute_nodes(model, tokenizer, missing, scaled(progress, share, 1.0))

    done = [verb.many(handle, list(configs), compute) for verb, configs, compute in
            ((head, wanted.heads, heads_of), (node, wanted.nodes, nodes_of)) if configs]
    progress(1.0, f"{len(wanted)} drill-downs stored")
    return Stored(hits=sum(d.hits for d in done), computed=sum(d.computed for d in done))
