"""The inspect verbs: `verb(handle, Config, progress) -> Computed[Result]`, each cached in the store under
(inspect, action, model fingerprint, config, code version) like every other feature's artifacts."""
from __future__ import annotations

from backend.inspect.attention import CODE_VERSION as ATTENTION_VERSION
from backend.inspect.attention import AttentionResult, HeadResult, compute_attention, compute_head
from backend.inspect.config import AttentionConfig, DlaConfig, HeadConfig, LensConfig
from backend.inspect.dla import CODE_VERSION as DLA_VERSION
from backend.inspect.dla import DlaResult, compute_dla
from backend.inspect.graph import CODE_VERSION as GRAPH_VERSION
from backend.inspect.graph import GraphResult, compute_graph
from backend.inspect.graph_config import GraphConfig, GridConfig, HeadScoresConfig, NodeConfig
from backend.inspect.head_scores import CODE_VERSION as HEADS_VERSION
from backend.inspect.head_scores import GridResult, HeadScoresResult, compute_grid, compute_head_scores
from backend.inspect.lens import CODE_VERSION as LENS_VERSION
from backend.inspect.lens import LensResult, compute_lens
from backend.inspect.node import CODE_VERSION as NODE_VERSION
from backend.inspect.node import NodeResult, compute_node
from backend.progress import Progress, silent
from backend.store import Computed, ModelRef, cached

FEATURE = "inspect"


def _cached(handle, action: str, config, compute, version: str, progress: Progress):
    """One verb: the computation on the handle's model and tokenizer, through the store."""
    return cached(FEATURE, action, ModelRef.of(handle), config,
                  lambda: compute(handle.model, handle.tokenizer, config, progress), code_version=version)


def lens(handle, config: LensConfig = LensConfig(), progress: Progress = silent) -> Computed[LensResult]:
    return _cached(handle, "lens", config, compute_lens, LENS_VERSION, progress)


def dla(handle, config: DlaConfig = DlaConfig(), progress: Progress = silent) -> Computed[DlaResult]:
    return _cached(handle, "dla", config, compute_dla, DLA_VERSION, progress)


def attention(handle, config: AttentionConfig = AttentionConfig(),
              progress: Progress = silent) -> Computed[AttentionResult]:
    return _cached(handle, "attention", config, compute_attention, ATTENTION_VERSION, progress)


def head(handle, config: HeadConfig = HeadConfig(), progress: Progress = silent) -> Computed[HeadResult]:
    return _cached(handle, "head", config, compute_head, ATTENTION_VERSION, progress)


def graph(handle, config: GraphConfig = GraphConfig(), progress: Progress = silent) -> Computed[GraphResult]:
    return _cached(handle, "graph", config, compute_graph, GRAPH_VERSION, progress)


def node(handle, config: NodeConfig = NodeConfig(), progress: Progress = silent) -> Computed[NodeResult]:
    return _cached(handle, "node", config, compute_node, NODE_VERSION, progress)


def head_scores(handle, config: HeadScoresConfig = HeadScoresConfig(),
                progress: Progress = silent) -> Computed[HeadScoresResult]:
    return _cached(handle, "heads", config, compute_head_scores, HEADS_VERSION, progress)


def grid(handle, config: GridConfig = GridConfig(), progress: Progress = silent) -> Computed[GridResult]:
    return _cached(handle, "grid", config, compute_grid, HEADS_VERSION, progress)
