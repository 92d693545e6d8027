"""Inspect: look inside the selected model on any prompt. Logit lens, direct logit attribution, attention
patterns and a head drill-down (its pattern and what it writes to the vocabulary), the contribution graph with its
node drill-down, head scores and the all-heads grid, input attribution (captum), patching, ablation and steering,
each a cached verb."""
from backend.inspect.attention import AttentionResult, HeadResult, TokenEffect
from backend.inspect.attribution import AttributionResult
from backend.inspect.budget import check_prompt
from backend.inspect.config import EXAMPLE_PROMPT, AttentionConfig, AttributeConfig, DlaConfig, HeadConfig, LensConfig
from backend.inspect.dla import DlaResult
from backend.inspect.lens import LensResult
from backend.inspect.verbs import attention, attribute, dla, head, lens

__all__ = ["EXAMPLE_PROMPT", "AttentionConfig", "AttentionResult", "AttributeConfig", "AttributionResult",
           "DlaConfig", "DlaResult", "HeadConfig", "HeadResult", "LensConfig", "LensResult", "TokenEffect", "attention",
           "attribute", "check_prompt", "dla", "head", "lens"]

from backend.inspect.graph_config import GraphConfig, GridConfig, HeadScoresConfig, NodeConfig  # noqa: E402
from backend.inspect.verbs import graph, grid, head_scores, node  # noqa: E402

__all__ += ["GraphConfig", "GridConfig", "HeadScoresConfig", "NodeConfig", "graph", "grid", "head_scores", "node"]
