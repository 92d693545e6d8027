"""The decoding-accuracy benchmark's stored result (bench/decoding_accuracy.py), for showing before any run.

The result file is committed with the code; it is shown only for the model it was measured on (same
fingerprint), so a page never presents one model's benchmark as another's.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

RESULT = Path(__file__).resolve().parents[2] / "bench" / "results" / "decoding_accuracy.json"
COMMAND = ".venv/bin/python bench/decoding_accuracy.py"


@dataclass(frozen=True)
class StoredBenchmark:
    model: str
    fingerprint: str
    sets: dict[str, int]  # set name -> number of problems
    budgets: tuple[int, ...]
    mh_budgets: tuple[int, ...]  # MH's own, when the run left its costliest budget out
    max_new_tokens: int
    summary: tuple[dict, ...]  # one row per setting: label, strategy, budget, accuracy, latency, tokens, ...
    command: str


def stored_benchmark(fingerprint: str, path: Path = RESULT) -> StoredBenchmark | None:
    """The stored benchmark of the model with this fingerprint, or None (absent, unreadable, another model)."""
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
                           command=str(data.get("command", COMMAND)))
