"""Decoding strategies, registered by name: pages, CLI, batch mode and benchmarks list them from here.

To add a strategy (for example guided intervention from the disagreement feature):
  1. write a module that defines `STRATEGY = StrategySpec(name="guided", label=..., summary=...,
     run=my_run, params=(...), extra_defaults={"reasoning_model": "...", ...})`, where
     `my_run(ctx: DecodeContext, config: DecodeConfig) -> Outcome`; read your own options with
     `config.option(name)` (they travel in `config.extra` and are part of the cache key);
  2. add the module path to `STRATEGY_MODULES` below. That line is the whole registration.
Tests may also call `register(spec)` directly.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backend.decoding.config import DecodeConfig
from backend.decoding.context import DecodeContext
from backend.decoding.result import Outcome
from backend.errors import UserError

STRATEGY_MODULES: tuple[str, ...] = (
    "backend.decoding.algorithms.basic",
    "backend.decoding.algorithms.mh",
    "backend.decoding.algorithms.asmc",
    "backend.disagreement.strategy",
)


@dataclass(frozen=True)
class StrategySpec:
    """A decoding strategy.

    params:         DecodeConfig fields it reads (validated, shown as widgets, part of the cache key)
    extra_defaults: its own options in `config.extra`, with defaults
    at_budget:      the config that spends about `budget * max_new_tokens` generated tokens
                    (None: the strategy has one cost, e.g. greedy)
    check:          extra validation raising UserError
    """

    name: str
    label: str
    summary: str
    run: Callable[[DecodeContext, DecodeConfig], Outcome]
    params: tuple[str, ...] = ()
    extra_defaults: dict[str, Any] = field(default_factory=dict)
    at_budget: Callable[[DecodeConfig, int], DecodeConfig] | None = None
    check: Callable[[DecodeConfig], None] | None = None


_registry: dict[str, StrategySpec] = {}
_loaded = False


def register(spec: StrategySpec) -> StrategySpec:
    _registry[spec.name] = spec
    return spec


def strategies() -> dict[str, StrategySpec]:
    """All registered strategies by name, in registration order."""
    global _loaded
    if not _loaded:
        for path in STRATEGY_MODULES:
            module = importlib.import_module(path)
            for spec in (*getattr(module, "STRATEGIES", ()), *filter(None, [getattr(module, "STRATEGY", None)])):
                _registry.setdefault(spec.name, spec)
        _loaded = True
    return dict(_registry)


def get_strategy(name: str) -> StrategySpec:
    found = strategies().get(name)
    if found is None:
        raise UserError(f"Unknown decoding strategy {name!r}; choose one of {', '.join(strategies())}.")
    return found
