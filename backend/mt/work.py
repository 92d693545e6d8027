"""How much work a head map is (`backend.estimates.work`): prompts x their length in demonstrations (each prompt
is patched head by head and attributed with gradients, over a context of k shots), beside a fixed part."""
from __future__ import annotations

from backend.estimates.work import declare_work
from backend.mt.heads import HeadsConfig


# what a map costs beside its prompts: 1 prompt of 1 shot took 2.2 s, 3 prompts 6.1 s (one torch thread, load ~2,
# bench/fit_probes.py); 2.2 s and 4.2 s with two threads on an idle machine (bench/estimates.py)
FIXED_UNITS = 0.5


def head_map_units(subject, config: HeadsConfig) -> float:
    return FIXED_UNITS + config.n_prompts * (config.k_shots + 1)


# .venv/bin/python bench/fit_probes.py (CPU times, one torch thread, SmolLM2-135M, load ~8): 6.6-9.3 in 6 runs
declare_work("mt", "heads", head_map_units, probes_per_unit=6.9)
