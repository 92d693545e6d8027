"""How much work a head map is (`backend.estimates.work`): prompts x their length in demonstrations (each prompt
is patched head by head and attributed with gradients, over a context of k shots), beside a fixed part."""
from __future__ import annotations

from backend.estimates.work import declare_work
from backend.mt.heads import HeadsConfig


# what a map costs beside its prompts: 1 prompt of 1 shot took 2.2 s, 3 prompts 6.1 s (one torch thread, load ~2,
# bench/fit_probes.py); 1.9 s and 5.5 s of CPU in a later run (load ~2.5)
FIXED_UNITS = 0.25
# a first map in a process imports captum (and scipy.stats, unless another verb did) and sets up the kernels of
# its shapes: 0.8 units more than a warm map (bench/fit_probes.py, load ~2.5); an idle bench/estimates.py run's
# first map took 1.54x its calibrated estimate without it
FIRST_RUN_UNITS = 0.8


def head_map_units(subject, config: HeadsConfig) -> float:
    return FIXED_UNITS + config.n_prompts * (config.k_shots + 1)


# .venv/bin/python bench/fit_probes.py (CPU times, one torch thread, SmolLM2-135M, load ~8): 6.6-9.3 in 6 runs
declare_work("mt", "heads", head_map_units, probes_per_unit=6.9, first_run_units=FIRST_RUN_UNITS)
