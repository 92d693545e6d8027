"""Inspect: look inside the selected model on any prompt. Logit lens, direct logit attribution, attention
patterns, a head drill-down (its pattern and what it writes to the vocabulary) and input attribution (captum),
each a cached verb."""
from backend.inspect.attention import AttentionResult, HeadResult, TokenEffect
from backend.inspect.attribution import AttributionResult
from backend.inspect.config import EXAMPLE_PROMPT, AttentionConfig, AttributeConfig, DlaConfig, HeadConfig, LensConfig
from backend.inspect.dla import DlaResult
from backend.inspect.lens import LensResult
from backend.inspect.verbs import attention, attribute, dla, head, lens

__all__ = ["EXAMPLE_PROMPT", "AttentionConfig", "AttentionResult", "AttributeConfig", "AttributionResult",
           "DlaConfig", "DlaResult", "HeadConfig", "HeadResult", "LensConfig", "LensResult", "TokenEffect", "attention",
           "attribute", "dla", "head", "lens"]
