"""The settings of the causal inspect verbs: activation patching, ablation and steering. Lists (heads, layers,
neurons, coefficients, prompts) are text, parsed and checked against the model by `backend.internals.units`."""
from __future__ import annotations

import math
from dataclasses import dataclass

from backend.errors import UserError
from backend.internals.config import EXAMPLE_PROMPT, PROMPT_HELP
from backend.params import Config, param

PATCH_SITES = ("resid_pre", "attn_out", "mlp_out", "head", "head_pos")
CLEAN_PROMPT = "When Mary and John went to the store, John gave a drink to"
CORRUPTED_PROMPT = "When Mary and John went to the store, Mary gave a drink to"
REFERENCE_TEXTS = ("The weather was mild for the time of year, and the market stayed open late.\n"
                   "She read the letter twice before putting it back in the drawer.\n"
                   "Water boils at a lower temperature on a high mountain.\n"
                   "The committee will meet again next Tuesday to discuss the budget.\n"
                   "He planted tomatoes, beans and a row of sunflowers along the fence.\n"
                   "A train left the station at noon, heading north through the valley.")
TARGET_HELP = "exactly one token (mind the leading space, e.g. ' Mary'); empty: "
NO_CHAT = " (used as typed: no chat template, as `inspect lens`)"


@dataclass(frozen=True)
class PatchConfig(Config):
    clean: str = param(CLEAN_PROMPT, "the clean prompt, whose activations are patched in" + NO_CHAT)
    corrupted: str = param(CORRUPTED_PROMPT, "the corrupted prompt, patched; the same token length as the clean one")
    target: str = param("", "the token whose logit difference is measured; " + TARGET_HELP +
                        "the clean prompt's prediction")
    contrast: str = param("", "the token subtracted; " + TARGET_HELP + "the corrupted prompt's prediction")
    site: str = param("resid_pre", "what is patched: the residual entering each layer, attention or MLP output "
                      "(per layer and position), each head at all positions, or per head and position (slow)",
                      choices=PATCH_SITES)
    top_k: int = param(5, "tokens kept at the final position of every patched run", ge=1, le=20)


@dataclass(frozen=True)
class AblateConfig(Config):
    prompt: str = param(EXAMPLE_PROMPT, PROMPT_HELP + NO_CHAT)
    heads: str = param("", "heads to ablate as LAYER.HEAD, comma-separated (e.g. 23.3,29.0)")
    layers: str = param("", "whole attention layers to ablate (their attention output), comma-separated")
    mlps: str = param("", "MLP layers to ablate (their output), comma-separated")
    neurons: str = param("", "MLP neurons to ablate as LAYER:INDEX (the ids NAG shows), comma-separated")
    mode: str = param("mean", "zero: set to 0; mean: set to the mean over the reference texts", choices=("zero", "mean"))
    reference: str = param(REFERENCE_TEXTS, "reference texts for the mean, one per line")
    target: str = param("", "the token whose logit (difference) is compared; " + TARGET_HELP +
                        "the prediction before ablation")
    contrast: str = param("", "subtract this token's logit; " + TARGET_HELP + "none")
    generate: int = param(20, "greedy tokens generated before and after (0: none)", ge=0, le=200)
    top_k: int = param(5, "tokens listed at the final position", ge=1, le=20)


@dataclass(frozen=True)
class SteerConfig(Config):
    plus: str = param("Love", "prompt(s) whose residual is added, one per line (averaged)" + NO_CHAT)
    minus: str = param("Hate", "prompt(s) whose residual is subtracted, one per line (averaged)")
    layer: int = param(6, "layer whose input (the residual stream entering it) is read and steered", ge=0)
    coefficients: str = param("0,4,8", "steering coefficients, comma-separated, one generation each")
    prompt: str = param("I think you are", "the prompt generated from, steered at every position")
    max_new_tokens: int = param(30, "greedy tokens generated per coefficient", ge=1, le=200)

    def __post_init__(self) -> None:
        super().__post_init__()
        values = coefficient_values(self.coefficients)
        if not values or len(values) > 8:
            raise UserError(f"Give between 1 and 8 coefficients, got {len(values)}.")


def coefficient_values(text: str) -> tuple[float, ...]:
    """`"0,4,8"` -> (0.0, 4.0, 8.0); refuses what is not a finite number in one line."""
    values = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise UserError(f"Coefficients are comma-separated numbers such as 0,4,8; {part!r} is not one.") from None
        if not math.isfinite(value) or abs(value) > 1e4:
            raise UserError(f"Coefficient {part} is not a finite number of at most 10000 in size.")
        values.append(value)
    return tuple(values)
