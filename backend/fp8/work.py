"""How much work the FP8 bounds are (`backend.estimates.work`): the weights' spectral norms (the exact check
doubles them) plus the sample texts' forwards."""
from __future__ import annotations

from backend.estimates.work import declare_work
from backend.fp8.bounds import BoundsConfig

TEXT_TOKENS_PER_UNIT = 64  # a sample text of this many tokens costs about as much as the weights' norms


def bounds_units(subject, config: BoundsConfig) -> float:
    return (2 if config.verify else 1) + config.n_texts * config.max_tokens / TEXT_TOKENS_PER_UNIT


# .venv/bin/python bench/fit_probes.py (CPU times, one torch thread, SmolLM2-135M, load ~8): 3.2-5.1 in 6 runs
declare_work("fp8", "bounds", bounds_units, probes_per_unit=3.7)
