"""The stored decoding-accuracy benchmark of a model, for showing on the Decoding page before any run.

The results (`<data>/results/decoding_accuracy*.json`, one per model measured, published by
bench/decoding_accuracy.py) ship with the code; each is shown only for the model it was measured on (same
fingerprint), so a page never presents one model's benchmark as another's.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.results import load_result, result_names

RESULT_PREFIX = "decoding_accuracy"
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
    commands: tuple[str, ...]  # the run that made it, then each run merged into it (--merge)


def stored_benchmark(fingerprint: str, where: Path | None = None) -> StoredBenchmark | None:
    """The stored benchmark of the model with this fingerprint, or None (absent, unreadable, another model).
    `where` (tests): one result file, or a folder whose `decoding_accuracy*.json` files are searched instead of the
    shipped results; the first match by name wins."""
    if where is None:
        found = (load_result(name) for name in result_names(RESULT_PREFIX))
    elif where.is_dir():
        found = (load_result(p.stem, p) for p in sorted(where.glob(f"{RESULT_PREFIX}*.json")))
    else:
        found = iter([load_result(where.stem, where)])
    return next((b for b in (_benchmark(data, fingerprint) for data in found) if b is not None), None)


def _benchmark(data: dict | None, fingerprint: str) -> StoredBenchmark | None:
    if data is None or data.get("fingerprint") != fingerprint or not data.get("summary"):
        return None
    budgets = tuple(data.get("budgets", ()))
    return StoredBenchmark(model=str(data.get("model", "")), fingerprint=fingerprint, sets=dict(data.get("sets", {})),
                           budgets=budgets, mh_budgets=tuple(data.get("mh_budgets", budgets)),
                           max_new_tokens=int(data.get("max_new_tokens", 0)), summary=tuple(data["summary"]),
                           commands=tuple(str(c) for c in data.get("commands", [data.get("command", COMMAND)])))
