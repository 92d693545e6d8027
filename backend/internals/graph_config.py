"""Settings of the whole-computation views: the contribution graph, a node of it, head scores and the all-heads
grid. Model-dependent ranges (layer, position) are checked by `backend.internals.prompt` before any forward."""
from __future__ import annotations

from dataclasses import dataclass

from backend.internals.config import EXAMPLE_PROMPT, POSITION_HELP, PROMPT_HELP
from backend.params import Config, param, require

STAGES = ("mid", "post")
SCORES = ("previous", "duplicate", "induction", "sink")


@dataclass(frozen=True)
class GraphConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    position: int = param(-1, POSITION_HELP + "; the graph is built backwards from the last layer's state there")
    threshold: float = param(0.04, "keep edges whose share of the state they enter is at least this (Ferrando & "
                             "Voita's default)", gt=0.0, le=1.0)
    per_head: bool = param(False, "one attention edge per head (shares over every head and source) instead of one "
                           "per source position")


@dataclass(frozen=True)
class NodeConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    layer: int = param(0, "residual state after this many blocks (0: the embeddings)", ge=0)
    position: int = param(-1, POSITION_HELP)
    stage: str = param("post", "post: after the block's MLP; mid: after its attention, before the MLP",
                       choices=STAGES)
    top_k: int = param(10, "tokens listed for the lens and for the block's promoted and suppressed", ge=1, le=100)

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.stage == "post" or self.layer >= 1, "The state after attention exists from layer 1 on "
                "(layer 0 is the embeddings).")


REPEAT_HELP = ("score on random tokens of this length repeated twice instead of the prompt (the induction test); "
               "0: the prompt")


@dataclass(frozen=True)
class HeadScoresConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    score: str = param("previous", "previous: attention to the token before; duplicate: to earlier copies of the "
                       "same token; induction: to the token after an earlier copy; sink: to the first token",
                       choices=SCORES)
    repeat: int = param(0, REPEAT_HELP, ge=0, le=200)
    seed: int = param(0, "seed of the random tokens (with --repeat)", ge=0)


@dataclass(frozen=True)
class GridConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP)
    layer: int = param(0, "the layer whose heads are drawn (0-based; ignored with --score)", ge=0)
    score: str = param("", "draw the top_k heads of every layer by this score instead of one layer's heads",
                       choices=("",) + SCORES)
    top_k: int = param(10, "heads drawn with --score", ge=1, le=64)
    repeat: int = param(0, REPEAT_HELP, ge=0, le=200)
    seed: int = param(0, "seed of the random tokens (with --repeat)", ge=0)
