"""The decoding-accuracy benchmark's shared settings and problem sets: bench/decoding_accuracy.py runs them and
bench/reasoning_errors.py reads the same stored decodes back, so both build them here."""
from __future__ import annotations

from backend.decoding.config import DecodeConfig
from backend.tasks.arithmetic import Problem
from backend.tasks.problem_sets import evenly_spread, handwritten_problems, problem_set


def benchmark_config(max_new_tokens: int = 96, alpha: float = 4.0) -> DecodeConfig:
    """What every setting of the benchmark shares; each run sets its strategy (and budget)."""
    return DecodeConfig(max_new_tokens=max_new_tokens, alpha=alpha, n=4, block_size=16, mh_steps=1, temperature=1.0)


def benchmark_sets(family: str, heldout: int, handwritten: int, heldout_skip: int = 0) -> dict[str, list[Problem]]:
    """"heldout": the first `heldout` problems of the generator's family (less the first `heldout_skip`, to
    shard a run); "handwritten" (when asked): that many of the hand-written set, evenly spread over it."""
    sets = {"heldout": problem_set(family, heldout)[heldout_skip:]}
    if handwritten:
        sets["handwritten"] = evenly_spread(handwritten_problems(), handwritten)
    return sets
