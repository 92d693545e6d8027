"""How much work one decode is (`backend.estimates.work`): new tokens x the rows decoded together."""
from __future__ import annotations

from backend.decoding.run import RunKey
from backend.estimates.work import declare_work

BATCH_ROW_SHARE = 0.25  # what each extra row of a batched step adds to a one-row step (a small model on a CPU)
MULTI_ROW = {"asmc", "best_of_n"}  # strategies decoding `n` rows at once


def decode_units(subject, key: RunKey) -> float:
    config = key.config
    rows = config.n if config.strategy in MULTI_ROW else 1
    steps = 1 + config.mh_steps if config.strategy == "mh" else 1
    return config.max_new_tokens * (1 + BATCH_ROW_SHARE * (rows - 1)) * steps


# .venv/bin/python bench/fit_probes.py (CPU times, one torch thread, SmolLM2-135M, greedy, load ~8): 0.55-0.67 in 6 runs
declare_work("decoding", "run", decode_units, probes_per_unit=0.56)
