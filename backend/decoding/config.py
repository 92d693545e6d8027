"""The one configuration of a decoding run, its limits, and the checks that turn bad input into UserError.

A strategy reads only the fields it declares (`StrategySpec.params`); `canonical()` resets the
others to their defaults so that, e.g., greedy runs with different alphas share one cache entry.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from backend.errors import UserError

MAX_NEW_TOKENS = 1024  # per sequence
MAX_PARTICLES = 128  # particles / samples decoded side by side
MAX_ALPHA = 16.0
MAX_TOKEN_BUDGET = 65_536  # generated tokens of one run, all particles / proposals together
SELECTIONS = ("auto", "score", "vote")
CACHE_MODES = ("reorder", "recompute")


@dataclass(frozen=True)
class DecodeConfig:
    """Parameters of one decoding run. Units: tokens; temperatures and alpha are dimensionless.

    strategy:       registry name (see `backend.decoding.registry.STRATEGIES`)
    max_new_tokens: new tokens per sequence, including the stop token
    seed:           mixed with the prompt, so each prompt of a batch has its own stream
    temperature:    sampling temperature (sampling, best_of_n)
    alpha:          power of the target p(x)^alpha (low_temp: temperature 1/alpha; mh; asmc)
    n:              samples (best_of_n) or particles (asmc; the first round's when adaptive)
    selection:      best_of_n / asmc answer choice: "score" (max log-likelihood / log-weight),
                    "vote" (majority answer), "auto" (vote when the task has a checker)
    block_size:     mh: tokens per block B
    mh_steps:       mh: Metropolis-Hastings steps K after each block
    ess_threshold:  asmc: resample when ESS < threshold * N
    resampler:      asmc: "systematic" | "multinomial"
    alpha_ramp:     asmc: alpha rises linearly from 1 to alpha over this many tokens (0: no ramp)
    adaptive:       asmc: grow the population between rounds (rule in backend.decoding.asmc)
    token_budget:   asmc adaptive: generated tokens for all rounds (0: 4 * n * max_new_tokens)
    max_particles:  asmc adaptive: largest population of a round
    resample_cache: asmc: "reorder" the KV cache rows (default) or "recompute" the prefixes (baseline)
    extra:          options of strategies registered by other features (JSON values)
    """

    strategy: str = "asmc"
    max_new_tokens: int = 96
    seed: int = 0
    temperature: float = 1.0
    alpha: float = 4.0
    n: int = 8
    selection: str = "auto"
    block_size: int = 16
    mh_steps: int = 2
    ess_threshold: float = 0.5
    resampler: str = "systematic"
    alpha_ramp: int = 0
    adaptive: bool = False
    token_budget: int = 0
    max_particles: int = 32
    resample_cache: str = "reorder"
    extra: dict[str, Any] = field(default_factory=dict)

    def replace(self, **changes: Any) -> DecodeConfig:
        return dataclasses.replace(self, **changes)

    def option(self, name: str, default: Any = None) -> Any:
        return self.extra.get(name, default)

    @property
    def budget(self) -> int:
        """Generated-token budget of an adaptive ASMC run."""
        return self.token_budget or 4 * self.n * self.max_new_tokens


GENERIC_FIELDS = ("strategy", "max_new_tokens", "seed")
_DEFAULTS = DecodeConfig()


def canonical(config: DecodeConfig, params: tuple[str, ...]) -> DecodeConfig:
    """The config with every field the strategy does not read reset to its default (the cache key)."""
    keep = set(GENERIC_FIELDS) | set(params)
    changes = {f.name: getattr(_DEFAULTS, f.name) for f in dataclasses.fields(DecodeConfig)
               if f.name not in keep}
    return dataclasses.replace(config, **changes)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise UserError(message)


def validate(config: DecodeConfig, params: tuple[str, ...]) -> None:
    """UserError with a human message for any parameter out of range (only the strategy's own)."""
    c = config
    _check(1 <= c.max_new_tokens <= MAX_NEW_TOKENS,
           f"max_new_tokens must be between 1 and {MAX_NEW_TOKENS}, got {c.max_new_tokens}.")
    if "temperature" in params:
        _check(0 < c.temperature <= 10, f"temperature must be in (0, 10], got {c.temperature} "
                                        "(use the greedy strategy for temperature 0).")
    if "alpha" in params:
        _check(0 < c.alpha <= MAX_ALPHA, f"alpha must be in (0, {MAX_ALPHA:g}], got {c.alpha}.")
    if "n" in params:
        _check(2 <= c.n <= MAX_PARTICLES,
               f"n must be between 2 and {MAX_PARTICLES} for {c.strategy} (got {c.n}); with one sample or "
               "particle use the sampling strategy.")
        _check(c.n * c.max_new_tokens <= MAX_TOKEN_BUDGET,
               f"n * max_new_tokens = {c.n * c.max_new_tokens} tokens is over the per-run budget of "
               f"{MAX_TOKEN_BUDGET}.")
    if "selection" in params:
        _check(c.selection in SELECTIONS, f"selection must be one of {SELECTIONS}, got {c.selection!r}.")
    if "block_size" in params:
        _check(1 <= c.block_size <= c.max_new_tokens,
               f"block_size must be between 1 and max_new_tokens ({c.max_new_tokens}), got {c.block_size}.")
    if "mh_steps" in params:
        _check(0 <= c.mh_steps <= 100, f"mh_steps must be between 0 and 100, got {c.mh_steps}.")
    if "ess_threshold" in params:
        _check(0 <= c.ess_threshold <= 1, f"ess_threshold must be in [0, 1], got {c.ess_threshold}.")
    if "resampler" in params:
        from backend.decoding.resampling import RESAMPLERS

        _check(c.resampler in RESAMPLERS, f"resampler must be one of {tuple(RESAMPLERS)}, got {c.resampler!r}.")
    if "alpha_ramp" in params:
        _check(0 <= c.alpha_ramp <= c.max_new_tokens,
               f"alpha_ramp must be between 0 and max_new_tokens ({c.max_new_tokens}), got {c.alpha_ramp}.")
    if "resample_cache" in params:
        _check(c.resample_cache in CACHE_MODES,
               f"resample_cache must be one of {CACHE_MODES}, got {c.resample_cache!r}.")
    if "adaptive" in params and c.adaptive:
        _check(c.n <= c.max_particles <= MAX_PARTICLES,
               f"max_particles must be between n ({c.n}) and {MAX_PARTICLES}, got {c.max_particles}.")
        _check(c.token_budget == 0 or c.n * c.max_new_tokens <= c.token_budget <= MAX_TOKEN_BUDGET,
               f"token_budget must be 0 (automatic) or between n * max_new_tokens ({c.n * c.max_new_tokens}) "
               f"and {MAX_TOKEN_BUDGET}, got {c.token_budget}.")
