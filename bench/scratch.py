"""A benchmark's own throwaway store and watermark secret, set before the backend reads its settings."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def scratch_store(prefix: str) -> Path:
    """A new temporary folder holding this run's DuckDB store and watermark secret (so a bench never touches the
    user's store or their master key); call before importing the backend. Returns the folder."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["DASH_STORE"] = str(folder / "store.duckdb")
    os.environ["DASH_WATERMARK_SECRET_FILE"] = str(folder / "secret.key")
    return folder
