"""How much work the FP8 bounds are (`backend.estimates.work`): the weights' spectral norms (the exact check
doubles them) plus the sample texts' forwards."""
from __future__ import annotations

from backend.estimates.work import declare_work
from backend.fp8.bounds import BoundsConfig

TEXT_TOKENS_PER_UNIT = 64  # a sample text of this many tokens costs about as much as the weights' norms


def bounds_units(subject, config: BoundsConfig) -> float:
    return (2 if config.verify else 1) + config.n_texts * config.max_tokens / TEXT_TOKENS_PER_UNIT


# bench/estimates.py on the shared 2-core machine (load ~24): 9 probes a unit gave actual / estimate 0.19
declare_work("fp8", "bounds", bounds_units, probes_per_unit=1.7)
