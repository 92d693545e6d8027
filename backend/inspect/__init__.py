"""Inspect: look inside the selected model on any prompt. Logit lens, direct logit attribution, attention
patterns and a head drill-down (its pattern and what it writes to the vocabulary), each a cached verb."""
from backend.inspect.attention import AttentionResult, HeadResult, TokenEffect
from backend.inspect.budget import check_prompt
from backend.inspect.config import EXAMPLE_PROMPT, AttentionConfig, DlaConfig, HeadConfig, LensConfig
from backend.inspect.dla import DlaResult
from backend.inspect.lens import LensResult
from backend.inspect.verbs import attention, dla, head, lens

__all__ = ["EXAMPLE_PROMPT", "AttentionConfig", "AttentionResult", "DlaConfig", "DlaResult", "HeadConfig",
           "HeadResult", "LensConfig", "LensResult", "TokenEffect", "attention", "check_prompt", "dla", "head",
           "lens"]
