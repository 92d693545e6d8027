"""The inspect verbs: `verb(handle, Config, progress) -> Computed[Result]`, each cached in the store under
(inspect, action, model fingerprint, config, code version) like every other feature's artifacts."""
from __future__ import annotations

from backend.inspect.ablation import CODE_VERSION as ABLATE_VERSION
from backend.inspect.ablation import compute_ablate
from backend.inspect.attention import CODE_VERSION as ATTENTION_VERSION
from backend.inspect.attention import AttentionResult, HeadResult, compute_attention, compute_head
from backend.inspect.attribution import CODE_VERSION as ATTRIBUTION_VERSION
from backend.inspect.attribution import compute_attribution
from backend.inspect.config import AttentionConfig, AttributeConfig, DlaConfig, HeadConfig, LensConfig
from backend.inspect.dla import CODE_VERSION as DLA_VERSION
from backend.inspect.dla import DlaResult, compute_dla
from backend.inspect.graph import CODE_VERSION as GRAPH_VERSION
from backend.inspect.graph import compute_graph
from backend.inspect.graph_config import GraphConfig, GridConfig, HeadScoresConfig, NodeConfig
from backend.inspect.head_scores import CODE_VERSION as HEADS_VERSION
from backend.inspect.head_scores import compute_grid, compute_head_scores
from backend.inspect.intervene_config import AblateConfig, PatchConfig, SteerConfig
from backend.inspect.lens import CODE_VERSION as LENS_VERSION
from backend.inspect.lens import LensResult, compute_lens
from backend.inspect.node import CODE_VERSION as NODE_VERSION
from backend.inspect.node import compute_node
from backend.inspect.patching import CODE_VERSION as PATCH_VERSION
from backend.inspect.patching import compute_patch
from backend.inspect.steering import CODE_VERSION as STEER_VERSION
from backend.inspect.steering import compute_steer
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


def _verb(action: str, config_cls: type, compute, version: str):
    """A verb `(handle, config=config_cls(), progress) -> Computed[Result]` cached under `action`."""
    def verb(handle, config=None, progress: Progress = silent) -> Computed:
        return _cached(handle, action, config_cls() if config is None else config, compute, version, progress)
    verb.__name__ = verb.__qualname__ = action
    return verb


graph = _verb("graph", GraphConfig, compute_graph, GRAPH_VERSION)  # -> Computed[GraphResult]
node = _verb("node", NodeConfig, compute_node, NODE_VERSION)  # -> Computed[NodeResult]
head_scores = _verb("heads", HeadScoresConfig, compute_head_scores, HEADS_VERSION)  # -> Computed[HeadScoresResult]
grid = _verb("grid", GridConfig, compute_grid, HEADS_VERSION)  # -> Computed[GridResult]
attribute = _verb("attribute", AttributeConfig, compute_attribution, ATTRIBUTION_VERSION)  # -> AttributionResult
patch = _verb("patch", PatchConfig, compute_patch, PATCH_VERSION)  # -> Computed[PatchResult]
ablate = _verb("ablate", AblateConfig, compute_ablate, ABLATE_VERSION)  # -> Computed[AblateResult]
steer = _verb("steer", SteerConfig, compute_steer, STEER_VERSION)  # -> Computed[SteerResult]
