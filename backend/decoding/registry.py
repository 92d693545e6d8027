"""Decoding strategies, registered by name: pages, CLI, batch mode and benchmarks list them from `STRATEGIES`.

To add a strategy (the disagreement feature's guided intervention is one):
  1. in your feature's module, register `StrategySpec(name=..., label=..., help=..., run=my_run,
     params=(...), options=MyOptions)`, where `my_run(ctx: DecodeContext, config: DecodeConfig) -> Outcome`
     and `MyOptions` is a `backend.params.Config` dataclass of your own options; read them with
     `config.option(name)` (they travel in `config.extra` and are part of the cache key);
  2. list that module in `backend.features`: as a `PlugIn` of the decoding feature (a module of the decoding
     feature itself goes in its `registers`).
The decoding core names no strategy outside `backend.decoding.algorithms`.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.variants import Registry, Variant

if TYPE_CHECKING:  # annotations only: the config module reads STRATEGIES from here
    from backend.decoding.config import DecodeConfig


@dataclass(frozen=True)
class StrategySpec(Variant):
    """A decoding strategy; `run(ctx: DecodeContext, config: DecodeConfig) -> Outcome`.

    params:    DecodeConfig fields it reads (validated, shown as widgets, part of the cache key)
    options:   a Config dataclass of its own options in `config.extra` (defaults, ranges, help)
    at_budget: the config that spends about `budget * max_new_tokens` generated tokens
               (None: the strategy has one cost, e.g. greedy)
    check:     a rule across fields that `params` cannot express, raising UserError (e.g. MH's cost)
    reference: config -> (label, config) of a baseline a batch runs beside it (RC: plain decoding at the
               same total token budget); `settings_for` adds it
    """

    config: type | None = None  # a strategy reads its family's config, DecodeConfig (plus its `options`)
    params: tuple[str, ...] = ()
    options: type | None = None
    at_budget: Callable[[DecodeConfig, int], DecodeConfig] | None = None
    check: Callable[[DecodeConfig], None] | None = None
    reference: Callable[[DecodeConfig], tuple[str, DecodeConfig]] | None = None

    @property
    def extra_defaults(self) -> dict[str, Any]:
        """Its options with their defaults, in declaration order (fills `config.extra`)."""
        return dataclasses.asdict(self.options()) if self.options is not None else {}


STRATEGIES: Registry[StrategySpec] = Registry("decoding-strategies", "decoding strategy")
