"""The decoding-accuracy benchmark (bench/decoding_accuracy.py): its shared settings and problem sets, and
its stored result, for showing before any run.

The result files (`bench/results/decoding_accuracy*.json`, one per model measured) are committed with the code;
each is shown only for the model it was measured on (same fingerprint), so a page never presents one model's
benchmark as another's. Other benchmarks that read the
same stored decodes (bench/reasoning_errors.py) build their settings and sets here too.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from backend.decoding.config import DecodeConfig
from backend.tasks.arithmetic import Problem
from backend.tasks.problem_sets import evenly_spread, handwritten_problems, problem_set

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
RESULT_GLOB = "decoding_accuracy*.json"
COMMAND = ".venv/bin/python bench/decoding_accuracy.py"


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


@dataclass(frozen=True)
class StoredBenchmark:
    model: str
    fingerprint: str
    sets: dict[str, int]  # set name -> number of problems
    budgets: tuple[int, ...]
    mh_budgets: tuple[int, ...]  # MH's own, when the run left its costliest budget out
    max_new_tokens: int
    summary: tuple[dict, ...]  # one row per setting: label, strategy, budget, accuracy, latency, tokens, ...
    commands: tuple[str, ...]  # the run that made it, then each run merged into it (--merge)


def stored_benchmark(fingerprint: str, where: Path = RESULTS) -> StoredBenchmark | None:
    """The stored benchmark of the model with this fingerprint, or None (absent, unreadable, another model).
    `where`: one result file, or a folder whose `decoding_accuracy*.json` files are searched (first match by
    name wins)."""
    paths = sorted(where.glob(RESULT_GLOB)) if where.is_dir() else [where]
    for path in paths:
        found = _read_benchmark(path, fingerprint)
        if found is not None:
            return found
    return None


def _read_benchmark(path: Path, fingerprint: str) -> StoredBenchmark | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint or not data.get("summary"):
        return None
    budgets = tuple(data.get("budgets", ()))
    return StoredBenchmark(model=str(data.get("model", "")), fingerprint=fingerprint, sets=dict(data.get("sets", {})),
                           budgets=budgets, mh_budgets=tuple(data.get("mh_budgets", budgets)),
                           max_new_tokens=int(data.get("max_new_tokens", 0)), summary=tuple(data["summary"]),
                           commands=tuple(str(c) for c in data.get("commands", [data.get("command", COMMAND)])))
