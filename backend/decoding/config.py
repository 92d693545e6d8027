"""The one configuration of a decoding run, its limits, and the rules that turn bad input into UserError.

A strategy reads only the fields it declares (`StrategySpec.params`): only those are validated, and
`canonical()` resets the others to their defaults so that, e.g., greedy runs with different alphas
share one cache entry. A DecodeConfig names a registered strategy (`backend.features.load_all()`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from backend.decoding.registry import STRATEGIES
from backend.decoding.resampling import RESAMPLERS
from backend.errors import UserError
from backend.models.reduced import PRECISIONS
from backend.params import Config, default_of, param, require

MAX_NEW_TOKENS = 1024  # per sequence
MAX_PARTICLES = 128  # particles / samples decoded side by side
MAX_ALPHA = 16.0
MAX_TOKEN_BUDGET = 65_536  # generated tokens of one run, all particles / proposals together
SELECTIONS = ("auto", "score", "vote")
CACHE_MODES = ("reorder", "recompute")
GENERIC_FIELDS = ("strategy", "max_new_tokens", "seed", "precision")
ADAPTIVE_FIELDS = ("token_budget", "max_particles")  # read only when adaptive


@dataclass(frozen=True)
class DecodeConfig(Config):
    """Parameters of one decoding run. Units: tokens; temperatures and alpha are dimensionless.

    selection: "auto" votes when the task has a checker; adaptive: the rule is in
    backend.decoding.algorithms.asmc; extra: options of strategies registered by other features
    (JSON values, declared by the strategy's `options`).
    """

    strategy: str = param("asmc", "registry name (see `decode list`)")
    max_new_tokens: int = param(96, "new tokens per sequence, including the stop token", ge=1, le=MAX_NEW_TOKENS)
    seed: int = param(0, "random seed, mixed with the prompt (each prompt of a batch has its own stream)")
    precision: str = param("reference", "weights every strategy decodes with: reference (the model's own), an "
                                        "int8 / bf16 copy (faster on a CPU; tokens can differ), or packed (the "
                                        "model's own, faster over several rows on a CPU; sums in another order)",
                           choices=PRECISIONS, keyed_when_set=True)
    temperature: float = param(1.0, "sampling temperature (sampling, best_of_n)", gt=0, le=10,
                               hint="(use the greedy strategy for temperature 0)")
    alpha: float = param(4.0, "power of the target p(x)^alpha (low_temp: temperature 1/alpha; mh; asmc)",
                         gt=0, le=MAX_ALPHA)
    n: int = param(8, "samples (best_of_n) or particles (asmc; the first round's when adaptive)",
                   ge=2, le=MAX_PARTICLES, hint="With one sample or particle use the sampling strategy.")
    selection: str = param("auto", "best_of_n / asmc answer choice: score (max log-likelihood / log-weight), "
                                   "vote (majority answer), auto (vote when the task has a checker)",
                           choices=SELECTIONS)
    block_size: int = param(16, "mh: tokens per block B", ge=1, le=MAX_NEW_TOKENS)
    mh_steps: int = param(2, "mh: Metropolis-Hastings steps K after each block", ge=0, le=100)
    ess_threshold: float = param(0.5, "asmc: resample when ESS < threshold * N", ge=0, le=1)
    resampler: str = param("systematic", "asmc: resampling scheme", choices=tuple(RESAMPLERS))
    alpha_ramp: int = param(0, "asmc: alpha rises linearly from 1 to alpha over this many tokens (0: no ramp)",
                            ge=0, le=MAX_NEW_TOKENS)
    adaptive: bool = param(False, "asmc: grow the population between rounds")
    token_budget: int = param(0, "asmc adaptive: generated tokens for all rounds (0: 4 * n * max_new_tokens)",
                              ge=0, le=MAX_TOKEN_BUDGET)
    max_particles: int = param(32, "asmc adaptive: largest population of a round", ge=2, le=MAX_PARTICLES)
    resample_cache: str = param("reorder", "asmc: reorder the KV cache rows, or recompute the prefixes (baseline)",
                                choices=CACHE_MODES)
    extra: dict[str, Any] = field(default_factory=dict)

    def replace(self, **changes: Any) -> DecodeConfig:
        return dataclasses.replace(self, **changes)

    def option(self, name: str, default: Any = None) -> Any:
        return self.extra.get(name, default)

    @property
    def budget(self) -> int:
        """Generated-token budget of an adaptive ASMC run."""
        return self.token_budget or 4 * self.n * self.max_new_tokens

    def spec(self):
        """The registered strategy (UserError listing the known ones)."""
        return STRATEGIES.get(self.strategy)

    def checked_fields(self) -> Iterable[str]:
        params = set(self.spec().params)
        if not self.adaptive:
            params -= set(ADAPTIVE_FIELDS)
        return (*GENERIC_FIELDS, *sorted(params))

    def __post_init__(self) -> None:
        spec = self.spec()
        super().__post_init__()
        c, params = self, set(spec.params)
        if "n" in params:
            require(c.n * c.max_new_tokens <= MAX_TOKEN_BUDGET,
                    f"n * max_new_tokens = {c.n * c.max_new_tokens} tokens is over the per-run budget of "
                    f"{MAX_TOKEN_BUDGET}.")
        if "block_size" in params:
            require(c.block_size <= c.max_new_tokens,
                    f"block_size must be between 1 and max_new_tokens ({c.max_new_tokens}), got {c.block_size}.")
        if "alpha_ramp" in params:
            require(c.alpha_ramp <= c.max_new_tokens,
                    f"alpha_ramp must be between 0 and max_new_tokens ({c.max_new_tokens}), got {c.alpha_ramp}.")
        if "adaptive" in params and c.adaptive:
            require(c.n <= c.max_particles,
                    f"max_particles must be between n ({c.n}) and {MAX_PARTICLES}, got {c.max_particles}.")
            require(c.token_budget == 0 or c.n * c.max_new_tokens <= c.token_budget,
                    f"token_budget must be 0 (automatic) or between n * max_new_tokens ({c.n * c.max_new_tokens})"
                    f" and {MAX_TOKEN_BUDGET}, got {c.token_budget}.")
        unknown = set(c.extra) - set(spec.extra_defaults)
        if unknown:
            raise UserError(f"Unknown option(s) for {spec.name}: {', '.join(sorted(unknown))}.")
        if spec.options is not None:
            spec.options(**{**spec.extra_defaults, **c.extra})
        if spec.check is not None:
            spec.check(c)


def canonical(config: DecodeConfig) -> DecodeConfig:
    """The config with every field its strategy does not read reset to its default and its options
    filled in (the cache key)."""
    spec = config.spec()
    keep = set(GENERIC_FIELDS) | set(spec.params)
    changes = {f.name: default_of(DecodeConfig, f.name) for f in dataclasses.fields(DecodeConfig)
               if f.name not in keep}
    changes["extra"] = {k: config.extra.get(k, v) for k, v in spec.extra_defaults.items()}
    return dataclasses.replace(config, **changes)
