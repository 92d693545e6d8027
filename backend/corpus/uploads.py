"""Shards uploaded through a page, kept beside the store (data/uploads/<digest>/) so a corpus job can stream
them like any server-side folder, and pruned when no job can still need them.

A folder is pruned when it is older than `KEEP_DAYS` and no job that could resume from it (running, or
finished with failed shards) names it as its corpus: a finished job's rows live in its own Parquet shards.
"""
from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from backend.corpus import jobs

KEEP_DAYS = 7.0


def uploads_root() -> Path:
    return jobs.jobs_root().parent / "uploads"


def save_upload_set(files: Sequence[tuple[str, bytes]]) -> Path:
    """One folder per distinct set of uploaded shards (same names and bytes: the same folder, not rewritten)."""
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(Path(name).name.encode() + b"\0" + hashlib.sha256(data).digest())
    folder = uploads_root() / digest.hexdigest()[:16]
    if not folder.is_dir():
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        for name, data in files:
            (partial / Path(name).name).write_bytes(data)
        partial.rename(folder)  # all shards or none: a job never streams a half-written set
        prune_uploads()  # when a set is added, not on every rerun of the page that holds the upload
    return folder


def _needed() -> set[Path]:
    try:
        frame = jobs.list_jobs()
    except Exception:  # noqa: BLE001 - no readable job table: keep everything
        return {Path("/")}
    if frame.empty:
        return set()
    open_jobs = frame[frame["status"] != jobs.FINISHED]
    return {Path(c).resolve() for c in open_jobs["corpus"]}


def prune_uploads(keep_days: float = KEEP_DAYS, now: float | None = None) -> list[Path]:
    """Remove upload folders older than `keep_days` that no open job names; returns what was removed."""
    root = uploads_root()
    if not root.is_dir():
        return []
    needed = _needed()
    if Path("/") in needed:
        return []
    cutoff = (now or time.time()) - keep_days * 86400
    removed = []
    for folder in root.iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff and folder.resolve() not in needed:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
