"""Inspect: look inside the selected model on any prompt. Logit lens, direct logit attribution, attention
patterns and a head drill-down (its pattern and what it writes to the vocabulary), the contribution graph with its
node drill-down, head scores and the all-heads grid, input attribution (captum), patching, ablation and steering,
each a cached verb."""
from backend.internals.attention import AttentionResult, HeadResult, TokenEffect
from backend.internals.attribution import AttributionResult
from backend.internals.budget import check_prompt
from backend.internals.config import EXAMPLE_PROMPT, AttentionConfig, AttributeConfig, DlaConfig, HeadConfig, LensConfig
from backend.internals.dla import DlaResult
from backend.internals.lens import LensResult
from backend.internals.verbs import attention, attribute, dla, head, lens

__all__ = ["EXAMPLE_PROMPT", "AttentionConfig", "AttentionResult", "AttributeConfig", "AttributionResult",
           "DlaConfig", "DlaResult", "HeadConfig", "HeadResult", "LensConfig", "LensResult", "TokenEffect", "attention",
           "attribute", "check_prompt", "dla", "head", "lens"]

from backend.internals.graph_config import GraphConfig, GridConfig, HeadScoresConfig, NodeConfig  # noqa: E402
from backend.internals.verbs import graph, grid, head_scores, node  # noqa: E402

__all__ += ["GraphConfig", "GridConfig", "HeadScoresConfig", "NodeConfig", "graph", "grid", "head_scores", "node"]

from backend.internals.drilldowns import (Drilldowns, dla_drilldowns, drilldowns_stored,  # noqa: E402
                                          graph_drilldowns, store_drilldowns)

__all__ += ["Drilldowns", "dla_drilldowns", "drilldowns_stored", "graph_drilldowns", "store_drilldowns"]
