"""Fields the MT configs share (HeadsConfig, ConditionConfig, ExperimentConfig): one default, range and help each.

Each function returns a fresh `param()` field; a config declares `strength: float = fields.strength()`.
Choices that name a registry are imported lazily by the configs themselves (prompts, steering).
"""
from __future__ import annotations

from typing import Any

from backend.mt.selection import MAX_PERCENT
from backend.params import param


def src() -> Any:
    return param("en", "source language (ISO code of a data column)")


def tgt() -> Any:
    return param("fr", "target language (ISO code of a data column)")


def k_shots(low: int = 1) -> Any:
    return param(5, "demonstrations per few-shot prompt", ge=low, le=10)


def percent() -> Any:
    return param(1.0, f"share of all heads selected, in percent of layers × heads (0-{MAX_PERCENT:g})", ge=0, le=MAX_PERCENT)


def strength() -> Any:
    return param(3.0, "steering strength: multiple of the steering vector added (add mode)", ge=0, le=20)


def rows() -> Any:
    return param((), "explicit data rows instead of the first n held-out sentences")


def max_new_tokens() -> Any:
    return param(48, "most tokens generated per sentence (generation also stops at a newline)", ge=1)


def seed() -> Any:
    return param(0, "seed of the prompt and demonstration draws")


def dataset() -> Any:
    return param("", "the data set's digest (filled in by the verb; part of the cache key)")


def steer_positions() -> Any:
    from backend.mt.steering import STEER_POSITIONS

    return param("every-step", "which positions are steered", choices=lambda: STEER_POSITIONS.names())


def steer_layers() -> Any:
    from backend.mt.steering import STEER_LAYERS

    return param("all", "layers whose heads may be selected to steer", choices=lambda: STEER_LAYERS.names())
