"""Measured results the app shows beside its own runs: JSON files shipped under `<data>/results/`.

The benchmarks under bench/ measure them and publish a copy here (bench/publish.py); the product reads them only
through `load_result`, never from bench/, so a page works the same on a checkout without the benchmarks.
"""
from __future__ import annotations

import json
from pathlib import Path

from backend.config import settings


def results_dir() -> Path:
    """Read at call time, so DASH_DATA_DIR set by a test or the CLI applies."""
    return settings().data_dir / "results"


def result_names(prefix: str) -> tuple[str, ...]:
    """The names (file stems) of the stored results starting with `prefix`, sorted."""
    return tuple(sorted(p.stem for p in results_dir().glob(f"{prefix}*.json")))


def load_result(name: str, where: Path | None = None) -> dict | None:
    """The stored result `name` (`<data>/results/<name>.json`, or `where` when given), or None when it is absent,
    unreadable or not a JSON object: a missing measurement is shown as missing, never as an error."""
    path = where if where is not None else results_dir() / f"{name}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def preset_evidence(feature: str, preset: str) -> str:
    """What a settings preset was measured to do (`<data>/results/preset_evidence.json`), shown beside it; "" when
    not recorded. The presets carry settings only; their figures are data, like every measured result."""
    found = (load_result("preset_evidence") or {}).get(feature, {})
    return str(found.get(preset, "")) if isinstance(found, dict) else ""
