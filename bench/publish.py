"""Publish a benchmark result the app shows: copy it from bench/results/ into data/results/, where the product
reads it (backend/results.py). The product never reads bench/, so a result it shows must be published."""
from __future__ import annotations

import shutil
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_RESULTS = ROOT / "bench" / "results"
DATA_RESULTS = ROOT / "data" / "results"
# The results a page shows: the Decoding page's stored benchmarks (strategies; ConvexBench), the Watermark page's
# latency and length figures.
SHOWN = ("decoding_accuracy*.json", "watermark.json", "watermark_length.json", "convexbench.json")


def publish(path: Path | str) -> Path | None:
    """Copy `path` into data/results/ when it is a bench/results/ file a page shows; returns the copy, else None
    (a result written elsewhere with --out is an experiment, not what the app ships)."""
    path = Path(path).resolve()
    if path.parent != BENCH_RESULTS or not any(fnmatch(path.name, pattern) for pattern in SHOWN):
        return None
    DATA_RESULTS.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(path, DATA_RESULTS / path.name))
