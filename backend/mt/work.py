"""How much work a head map is (`backend.estimates.work`): prompts x their length in demonstrations (each prompt
is patched head by head and attributed with gradients, over a context of k shots), beside a fixed part."""
from __future__ import annotations

from backend.estimates.work import declare_work
from backend.mt.heads import HeadsConfig


FIXED_UNITS = 3.0  # what a map costs beside its prompts (1 prompt of 1 shot: 12 s, 3 prompts: 22 s; load ~10)


def head_map_units(subject, config: HeadsConfig) -> float:
    return FIXED_UNITS + config.n_prompts * (config.k_shots + 1)


declare_work("mt", "heads", head_map_units, probes_per_unit=10.0)
