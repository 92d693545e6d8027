"""The settings of every inspect verb: one prompt and where to look in it. Ranges that depend on the model (layer,
head, position, tokens) are checked against it by `backend.internals.prompt` before any forward."""
from __future__ import annotations

from dataclasses import dataclass

from backend.internals.attribution_methods import ATTRIBUTIONS, FUNCTIONS
from backend.params import Config, param, require

EXAMPLE_PROMPT = "The Eiffel Tower is located in the city of"
MAX_GENERATE = 32  # each generated token is one attribution: more is minutes of CPU

PROMPT_HELP = "the text to look inside (tokenised as the model's tokenizer does, special tokens included)"
POSITION_HELP = "token position to read (-1: the last; negative counts from the end)"


@dataclass(frozen=True)
class LensConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    position: int = param(-1, POSITION_HELP + "; the final prediction's probability is traced there")
    top_k: int = param(5, "tokens kept per layer and position", ge=1, le=50)
    track: str = param("", "a token whose probability and rank are traced across layers at the position, beside the "
                       "final prediction (exactly one token; empty: none)", keyed_when_set=True)


@dataclass(frozen=True)
class DlaConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    position: int = param(-1, POSITION_HELP)
    target: str = param("", "the output token whose logit is attributed (exactly one token; empty: the model's "
                        "prediction)")
    contrast: str = param("", "attribute target minus this token's logit (exactly one token; empty: none)")

    def __post_init__(self) -> None:
        super().__post_init__()
        require(not self.contrast or self.target != self.contrast, same_token())


def same_token(target: str = "the target token") -> str:
    """The refusal of a contrast equal to the target (every part of their difference would be zero)."""
    return (f"The contrast token is {target}: target minus contrast is zero for every part; pick another "
            "contrast, or leave it empty.")


@dataclass(frozen=True)
class AttentionConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    layer: int = param(0, "layer (0-based)")
    head: int = param(0, "query head (0-based; with grouped-query attention its own pattern)")


@dataclass(frozen=True)
class HeadConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    layer: int = param(0, "layer (0-based)")
    head: int = param(0, "query head (0-based)")
    position: int = param(-1, POSITION_HELP)
    top_k: int = param(10, "promoted and suppressed tokens listed", ge=1, le=100)


@dataclass(frozen=True)
class AttributeConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    method: str = param("integrated_gradients", "attribution method (captum)", choices=ATTRIBUTIONS)
    target: str = param("", "the output token attributed after the prompt (exactly one token; empty: the model's "
                        "prediction)")
    generate: int = param(0, "instead of one target: a greedy continuation of N tokens, each attributed to the "
                          "prompt and the tokens generated before it", ge=0, le=MAX_GENERATE)
    function: str = param("probability", "what is attributed: the target's probability or its logit",
                          choices=FUNCTIONS)
    steps: int = param(32, "integrated gradients: steps along the path from the baseline", ge=2, le=512)

    def __post_init__(self) -> None:
        super().__post_init__()
        require(not (self.target and self.generate), "Give a target token or --generate N, not both.")
