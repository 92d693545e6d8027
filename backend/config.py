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
| DASH_MODEL_MEMORY_MB   | weights of all resident models together; least recently used   | 12288 (12 GiB)             |
|                        | idle ones are evicted past it (backend/models/residency.py)    |                            |
| DASH_ADMIN             | `1`: any session may delete any runs (a `?runs=` link included) | 0 (only the creating tab)  |
| DASH_INSPECT_MAX_MB    | memory one Inspect computation may use, estimated before its    | a quarter of the machine's |
|                        | forward (backend/internals/budget.py); over it the verb refuses   | physical memory            |

DASH_MODEL_MEMORY_MB's default is sized for a 24 GiB machine: 12 GiB of weights holds the largest model the
parameter budget admits (2e9 fp32 parameters = 8 GB) beside the embedded ones, and leaves about half the machine
to the OS, the Python and torch runtime (~2 GB), activations and caches of running computations, uploads and
browser sessions. Set it to about half the machine's memory elsewhere. DASH_INSPECT_MAX_MB takes a quarter of the
machine, so one long prompt's activations fit beside the resident models and never wake the OOM killer.
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
    model_memory_bytes: int = 12 * 2**30
    admin: bool = False
    inspect_max_bytes: int = 6 * 2**30

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
        model_memory_bytes=_megabytes(os.environ.get("DASH_MODEL_MEMORY_MB", str(DEFAULT_MODEL_MEMORY_MB))),
        inspect_max_bytes=_megabytes(os.environ.get("DASH_INSPECT_MAX_MB", str(default_inspect_mb())),
                                     "DASH_INSPECT_MAX_MB"),
        admin=os.environ.get("DASH_ADMIN", "0") == "1",
    )


DEFAULT_MODEL_MEMORY_MB = 12 * 1024  # see the module docstring: half of a 24 GiB machine


def default_inspect_mb() -> int:
    """A quarter of the machine's physical memory (6 GiB where the machine does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4 // 2**20
    except (ValueError, OSError, AttributeError):
        return 6 * 1024


def _megabytes(text: str, name: str = "DASH_MODEL_MEMORY_MB") -> int:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{name} must be a number of megabytes such as 12288, got {text!r}.") from None
    if not value > 0 or value == float("inf"):
        raise UserError(f"{name} must be a positive number of megabytes, got {text!r}.")
    return int(value * 2**20)


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
