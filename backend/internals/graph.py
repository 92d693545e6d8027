"""The contribution graph (information flow routes): residual states as nodes, the shares of
`backend.internals.flow` as edges, kept when at least the threshold and on a path into the chosen state.

Nodes are (layer, position, stage): stage "post" is the state after `layer` blocks (x[layer]; layer 0 the
embeddings), stage "mid" the state inside block `layer` after its attention, before its MLP. Edges:

    attn   x[l-1]_j -> mid(l)_i   the share of source j (one head's, with per_head) in the attention sum at i
    resid  x[l-1]_i -> mid(l)_i   the residual's share there
    ffn    mid(l)_i -> x[l]_i     the MLP output's share in x[l]_i
    resid  mid(l)_i -> x[l]_i     the residual's share there

The shares entering one node sum to 1 (before pruning). Pruning, as llm-transparency-tool does it: drop the edges
under the threshold, keep what still reaches x[L] at the chosen position.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from backend.internals.flow import Contributions, contributions_both
from backend.internals.graph_config import GraphConfig
from backend.internals.prompt import encode, position_index
from backend.progress import Progress, silent

if TYPE_CHECKING:  # imported where a graph is built: networkx costs ~0.3 s in every process loading the verbs
    import networkx as nx


@dataclass(frozen=True)
class GraphNode:
    layer: int
    position: int
    stage: str  # "mid" | "post"

    def to_json(self) -> dict:
        return {"layer": self.layer, "position": self.position, "stage": self.stage}


@dataclass(frozen=True)
class GraphEdge:
    source: GraphNode
    target: GraphNode
    kind: str  # "attn" | "ffn" | "resid"
    head: int | None  # with per_head, the attention edge's head
    weight: float  # share of `target` this term holds
    heads: tuple[float, ...] = ()  # a per-source attention edge: each head's share of `target` (per-head terms)

    def to_json(self) -> dict:
        return {"from": [self.source.layer, self.source.position], "to": [self.target.layer, self.target.position],
                "from_stage": self.source.stage, "to_stage": self.target.stage, "kind": self.kind,
                "head": self.head, "weight": self.weight, "heads": list(self.heads)}


@dataclass(frozen=True)
class GraphResult:
    tokens: tuple[str, ...]
    position: int  # 0-based: the graph is built backwards from x[n_layers] there
    threshold: float
    per_head: bool
    n_layers: int
    nodes: tuple[GraphNode, ...]  # sorted by layer, stage, position
    edges: tuple[GraphEdge, ...]  # strongest first

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "position": self.position, "threshold": self.threshold,
                "per_head": self.per_head, "n_layers": self.n_layers, "nodes": [n.to_json() for n in self.nodes],
                "edges": [e.to_json() for e in self.edges]}


def strong_graph(shares: Contributions, upto: int, threshold: float,
                 by_head: np.ndarray | None = None) -> nx.MultiDiGraph:
    """Every edge of at least `threshold` between the states of positions 0..upto (later ones cannot reach it).
    Filtering before networkx sees an edge keeps it at most 1 / threshold edges per state. `by_head` `[L, T, T, H]`:
    per-head shares attached to per-source attention edges (which heads carry them)."""
    import networkx as nx

    graph = nx.MultiDiGraph()
    per_head = shares.attn.ndim == 4

    def add(source: GraphNode, target: GraphNode, kind: str, head, weight: float, heads=()) -> None:
        if weight >= threshold:
            graph.add_edge(source, target, key=(kind, head), weight=float(weight), heads=tuple(heads))

    for block in range(shares.attn.shape[0]):
        layer = block + 1
        for i in range(upto + 1):
            mid, post = GraphNode(layer, i, "mid"), GraphNode(layer, i, "post")
            add(GraphNode(layer - 1, i, "post"), mid, "resid", None, shares.attn_resid[block, i])
            add(mid, post, "ffn", None, shares.ffn[block, i])
            add(mid, post, "resid", None, shares.ffn_resid[block, i])
            row = shares.attn[block, i, :i + 1]
            for index in zip(*np.nonzero(row >= threshold)):
                head = int(index[1]) if per_head else None
                split = () if by_head is None else (float(w) for w in by_head[block, i, index[0]])
                add(GraphNode(layer - 1, int(index[0]), "post"), mid, "attn", head, row[index], split)
    return graph


def prune(graph: nx.MultiDiGraph, root: GraphNode) -> nx.MultiDiGraph:
    """The states from which the graph's edges reach `root`, with the edges among them."""
    import networkx as nx

    if root not in graph:
        graph.add_node(root)
    return graph.subgraph(nx.ancestors(graph, root) | {root}).copy()


def to_result(graph: nx.MultiDiGraph, tokens, position: int, config: GraphConfig, n_layers: int) -> GraphResult:
    order = {"mid": 0, "post": 1}
    nodes = sorted(graph.nodes, key=lambda n: (n.layer, order[n.stage], n.position))
    edges = [GraphEdge(u, v, kind, head, float(d["weight"]), d["heads"]) for u, v, (kind, head), d in
             graph.edges(keys=True, data=True)]
    edges.sort(key=lambda e: (-e.weight, e.target.layer, e.target.position, e.source.position, e.kind))
    return GraphResult(tokens=tokens, position=position, threshold=config.threshold, per_head=config.per_head,
                       n_layers=n_layers, nodes=tuple(nodes), edges=tuple(edges))


@torch.no_grad()
def compute_graph(model, tokenizer, config: GraphConfig, progress: Progress = silent) -> GraphResult:
    encoded = encode(model, tokenizer, config.prompt)
    position = position_index(config.position, encoded.length)
    progress(0.1, "forward pass reading values, patterns and residual states")
    ids = encoded.ids[:, :position + 1]
    by_source, per_head = contributions_both(model, ids)
    shares = per_head if config.per_head else by_source
    progress(0.7, "building the graph and pruning it")
    n_layers = shares.attn.shape[0]
    graph = strong_graph(shares, position, config.threshold, None if config.per_head else per_head.attn)
    graph = prune(graph, GraphNode(n_layers, position, "post"))
    progress(1.0, f"graph: {graph.number_of_nodes()} states, {graph.number_of_edges()} edges")
    return to_result(graph, encoded.tokens, position, config, n_layers)
