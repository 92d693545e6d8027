"""The inspect verbs: `verb(handle, Config, progress) -> Computed[Result]`, each a `backend.verbs.Verb` cached in
the store under (inspect, action, model fingerprint, config, derived code version)."""
from __future__ import annotations

from types import ModuleType

import backend.internals.ablation as ablation
import backend.internals.attention as attention_maps
import backend.internals.attribution as attribution
import backend.internals.dla as dla_module
import backend.internals.graph as graph_module
import backend.internals.head_scores as scores_module
import backend.internals.lens as lens_module
import backend.internals.node as node_module
import backend.internals.patching as patching
import backend.internals.steering as steering
from backend.internals.config import AttentionConfig, AttributeConfig, DlaConfig, HeadConfig, LensConfig
from backend.internals.graph_config import GraphConfig, GridConfig, HeadScoresConfig, NodeConfig
from backend.internals.intervene_config import AblateConfig, PatchConfig, SteerConfig
from backend.verbs import Verb, register

FEATURE = "inspect"


def _verb(action: str, config_cls: type, compute, module: ModuleType, help: str) -> Verb:
    """A verb running `compute(model, tokenizer, config, progress)` on the handle's model; `module` (where the
    computation lives) enters its code version."""
    def on_model(handle, config, progress):
        return compute(handle.model, handle.tokenizer, config, progress)
    return register(Verb(FEATURE, action, config_cls, on_model, help, reads=(compute, module)))


lens = _verb("lens", LensConfig, lens_module.compute_lens, lens_module, "logit lens: each layer's top tokens")
dla = _verb("dla", DlaConfig, dla_module.compute_dla, dla_module, "direct logit attribution of a target token")
attention = _verb("attention", AttentionConfig, attention_maps.compute_attention, attention_maps,
                  "every head's attention pattern of one layer")
head = _verb("head", HeadConfig, attention_maps.compute_head, attention_maps, "one head: pattern, value-weighted "
             "pattern and the tokens it promotes")
graph = _verb("graph", GraphConfig, graph_module.compute_graph, graph_module, "contribution graph (Ferrando & Voita)")
node = _verb("node", NodeConfig, node_module.compute_node, node_module, "one residual state of the graph")
head_scores = _verb("heads", HeadScoresConfig, scores_module.compute_head_scores, scores_module,
                    "all heads scored: previous-token, duplicate-token, induction, sink")
grid = _verb("grid", GridConfig, scores_module.compute_grid, scores_module, "a grid of heads' patterns")
attribute = _verb("attribute", AttributeConfig, attribution.compute_attribution, attribution,
                  "input attribution with captum")
patch = _verb("patch", PatchConfig, patching.compute_patch, patching, "activation patching, clean into corrupted")
ablate = _verb("ablate", AblateConfig, ablation.compute_ablate, ablation, "head or neuron ablation")
steer = _verb("steer", SteerConfig, steering.compute_steer, steering, "activation steering by a contrast vector")
