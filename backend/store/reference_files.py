"""The shipped reference files: where they are and how to read them (gzip JSON lines, one artifact a line).
Kept apart from the import itself so the store's schema migration can read the reference keys."""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from backend.config import REPO_ROOT

REFERENCE_DIR = REPO_ROOT / "data" / "reference"
ENV_REFERENCE_DIR = "DASH_REFERENCE_DIR"


def reference_dir() -> Path:
    """DASH_REFERENCE_DIR, else data/reference. An empty folder leaves a store without the shipped artifacts, which
    is how `bench/first_open.py --export-reference` sees what the pages compute themselves."""
    return Path(os.environ.get(ENV_REFERENCE_DIR) or REFERENCE_DIR)


def reference_files(directory: Path | None = None) -> list[Path]:
    return sorted(Path(directory or reference_dir()).glob("*.jsonl.gz"))


def read_reference(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def reference_keys(directory: Path | None = None) -> set[str]:
    """The keys of every artifact in the reference files (the reference set)."""
    return {row["key"] for path in reference_files(directory) for row in read_reference(path) if "key" in row}
