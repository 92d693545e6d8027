"""The Neuron-Activated Graph of a target set.

Nodes are (layer, neuron) with weight = the profile frequency (share of the target documents' top-K
slots held by that neuron). Edges join neurons of adjacent layers with weight = share of target
documents in which both are in their layer's top-K (co-activation). Filters keep the graph readable:
a layer range, a minimum node weight, the heaviest `max_nodes_per_layer` neurons per layer and, over all layers,
the heaviest `max_nodes`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from backend.errors import UserError
from backend.nag.targets import TargetProfiles
from backend.params import Config, param

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class GraphConfig(Config):
    """Layer range [layer_min, layer_max] (checked against the profile's layers in build_graph)."""

    layer_min: int = param(0, "first layer shown", ge=0)
    layer_max: int = param(-1, "last layer shown (-1: the last layer)")
    min_weight: float = param(0.0, "minimum node weight (share of the target documents' top-K slots)", ge=0, le=1)
    max_nodes_per_layer: int = param(12, "nodes per layer (the heaviest neurons)", ge=1, le=100,
                                     hint="(a graph with more nodes per layer is unreadable)")
    min_edge_weight: float = param(0.0, "minimum co-activation (share of target documents)", ge=0, le=1)
    max_nodes: int = param(0, "the heaviest nodes kept over all layers (0: no cap beyond the per-layer one)", ge=0,
                           le=5000, keyed_when_set=True)


@dataclass(frozen=True)
class NagGraph:
    """layers/neurons/weights `[n_nodes]` (sorted by layer, then weight descending); edges `[E]` as node
    indices with co-activation weights in [0, 1]."""

    target: str
    n_targets: int
    layers: np.ndarray
    neurons: np.ndarray
    weights: np.ndarray
    edge_src: np.ndarray
    edge_dst: np.ndarray
    edge_weights: np.ndarray

    def to_networkx(self) -> nx.Graph:
        import networkx as nx  # here, not at import: it costs every process that loads the features ~0.5 s

        graph = nx.Graph(target=self.target)
        for i, (layer, neuron, weight) in enumerate(zip(self.layers, self.neurons, self.weights)):
            graph.add_node(i, layer=int(layer), neuron=int(neuron), weight=float(weight))
        for a, b, w in zip(self.edge_src, self.edge_dst, self.edge_weights):
            graph.add_edge(int(a), int(b), weight=float(w))
        return graph

    def positions(self) -> np.ndarray:
        """`[n_nodes, 2]` layered layout (x = layer, heaviest neuron of each layer on top), via networkx."""
        if len(self.layers) == 0:
            return np.zeros((0, 2))
        import networkx as nx

        pos = nx.multipartite_layout(self.to_networkx(), subset_key="layer", align="vertical")
        xy = np.array([pos[i] for i in range(len(self.layers))])
        xy[:, 1] *= -1  # networkx stacks a layer top-down from its first node; keep heaviest on top
        return xy


def _heaviest(layer_nodes: dict[int, np.ndarray], weights: np.ndarray, n: int) -> dict[int, np.ndarray]:
    """The n heaviest of the chosen nodes over all layers (ties: lower layer first), each layer keeping its order."""
    chosen = [(layer, neuron) for layer, kept in layer_nodes.items() for neuron in kept]
    order = sorted(range(len(chosen)), key=lambda i: (-weights[chosen[i]], i))[:n]
    kept = {chosen[i] for i in order}
    return {layer: np.array([x for x in nodes if (layer, x) in kept], dtype=np.int64)
            for layer, nodes in layer_nodes.items()}


def build_graph(profiles: TargetProfiles, target: int = 0, config: GraphConfig = GraphConfig()) -> NagGraph:
    if not 0 <= target < len(profiles.names):
        raise UserError(f"No target set number {target}.")
    weights, tops = profiles.weights[target], profiles.tops[target]
    n_layers = weights.shape[0]
    last = n_layers - 1 if config.layer_max < 0 else min(config.layer_max, n_layers - 1)
    if not 0 <= config.layer_min <= last:
        raise UserError(f"Layer range must lie within 0..{n_layers - 1}.")
    layer_nodes: dict[int, np.ndarray] = {}
    for layer in range(config.layer_min, last + 1):
        order = np.argsort(-weights[layer], kind="stable")[:config.max_nodes_per_layer]
        keep = order[(weights[layer, order] > 0) & (weights[layer, order] >= config.min_weight)]
        layer_nodes[layer] = keep
    if config.max_nodes:
        layer_nodes = _heaviest(layer_nodes, weights, config.max_nodes)
    layers = np.concatenate([np.full(len(v), k) for k, v in layer_nodes.items()]).astype(np.int64)
    neurons = np.concatenate(list(layer_nodes.values())).astype(np.int64)
    node_weights = weights[layers, neurons] if len(layers) else np.zeros(0)
    offsets = np.cumsum([0] + [len(v) for v in layer_nodes.values()])
    src, dst, ew = [], [], []
    n_docs = tops.shape[0]
    for j, layer in enumerate(list(layer_nodes)[:-1]):
        here, there = layer_nodes[layer], layer_nodes[layer + 1]
        a = (tops[:, layer, :, None] == here[None, None, :]).any(axis=1)  # [docs, n_here]: node in doc's top-K
        b = (tops[:, layer + 1, :, None] == there[None, None, :]).any(axis=1)
        co = (a.T.astype(np.int64) @ b.astype(np.int64)) / n_docs
        for x, y in zip(*np.nonzero(co)):
            if co[x, y] >= config.min_edge_weight:
                src.append(offsets[j] + x)
                dst.append(offsets[j + 1] + y)
                ew.append(co[x, y])
    return NagGraph(target=profiles.names[target], n_targets=n_docs, layers=layers, neurons=neurons,
                    weights=node_weights, edge_src=np.asarray(src, dtype=np.int64),
                    edge_dst=np.asarray(dst, dtype=np.int64), edge_weights=np.asarray(ew, dtype=np.float64))
