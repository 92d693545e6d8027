"""Paths, limits and the model allowlist. Every setting can be overridden by an environment variable.

| variable               | meaning                                                        | default                    |
|------------------------|----------------------------------------------------------------|----------------------------|
| DASH_DATA_DIR          | shipped data (registry, tasks, adapters)                       | <repo>/data                |
| DASH_CACHE_DIR         | dequantised model cache (gitignored)                           | <data>/cache               |
| DASH_STORE             | DuckDB artifact store file                                     | <data>/store.duckdb        |
| DASH_DEFAULT_MODEL     | registry id loaded when nothing is picked                      | smollm2-135m-instruct      |
| DASH_EXTRA_MODELS      | extra allowlisted sources, `id=source` separated by `;`        | (none)                     |
| DASH_MAX_PARAMS        | refuse models with more parameters than this                   | 2e9                        |
| DASH_DEVICE            | `cpu`, `cuda`, `mps` or `auto`                                 | auto                       |
| DASH_SHARED_RUNS       | `1`: the Runs page shows every session's runs (a trusted group) | 0 (each session its own)   |
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from backend.errors import UserError

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    cache_dir: Path
    store_path: Path
    default_model: str
    extra_models: str
    max_params: int
    device: str
    shared_runs: bool

    @property
    def registry_file(self) -> Path:
        return self.data_dir / "models" / "registry.json"


def settings() -> Settings:
    """Read the settings now (not at import time), so tests and the CLI can set variables first."""
    data_dir = Path(os.environ.get("DASH_DATA_DIR", REPO_ROOT / "data"))
    return Settings(
        data_dir=data_dir,
        cache_dir=Path(os.environ.get("DASH_CACHE_DIR", data_dir / "cache")),
        store_path=Path(os.environ.get("DASH_STORE", data_dir / "store.duckdb")),
        default_model=os.environ.get("DASH_DEFAULT_MODEL", "smollm2-135m-instruct"),
        extra_models=os.environ.get("DASH_EXTRA_MODELS", ""),
        max_params=_max_params(os.environ.get("DASH_MAX_PARAMS", "2e9")),
        device=_device(os.environ.get("DASH_DEVICE", "auto")),
        shared_runs=os.environ.get("DASH_SHARED_RUNS", "0") == "1",
    )


DEVICES = ("auto", "cpu", "cuda", "mps")


def _max_params(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"DASH_MAX_PARAMS must be a number of parameters such as 2e9, got {text!r}.") from None
    if not value >= 1 or value == float("inf"):
        raise UserError(f"DASH_MAX_PARAMS must be a positive number of parameters such as 2e9, got {text!r}.")
    return int(value)


def _device(text: str) -> str:
    if text not in DEVICES:
        raise UserError(f"DASH_DEVICE must be one of {', '.join(DEVICES)}, got {text!r}.")
    return text
