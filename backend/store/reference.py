"""Reference artifacts: results this code computed on the embedded models, shipped in the repository and
imported into the store by `models prepare` (so by `make run`) and by the app when it first opens a store
(`ensure_reference`: a store made by hand, or pointed to by DASH_STORE, gets them too), so a newcomer's first view of a heavy page is
served from the store instead of minutes of CPU.

They are ordinary artifacts, keyed exactly like computed ones (feature, action, model fingerprint, canonical
config, code version): another model, another setting or a bumped code version simply misses them and
computes. An import never replaces an artifact already in the store and records no run (nobody asked for it).
Each row's key is recomputed on import, so a hand-edited row is refused rather than served under a wrong key.
"""
from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from backend.config import REPO_ROOT
from backend.errors import UserError
from backend.store.artifacts import artifact_key
from backend.store.db import StoreUnavailable, connect, store_path

REFERENCE_DIR = REPO_ROOT / "data" / "reference"
ENV_REFERENCE_DIR = "DASH_REFERENCE_DIR"
COLUMNS = ("key", "feature", "action", "fingerprint", "params", "code_version", "payload", "compute_seconds")


@dataclass(frozen=True)
class ReferenceImport:
    """What one import did: rows offered by the files, rows new to the store, rows refused (key mismatch)."""

    files: int
    offered: int
    imported: int
    refused: int


def export_reference(fingerprints: Iterable[str], out: Path, store: Path | None = None,
                     actions: Iterable[str] = ()) -> int:
    """Write the store's artifacts of these model fingerprints to `out` (gzip JSON lines); returns the count.
    actions: only these "feature:action" kinds (e.g. a benchmark's sweep without its intermediate artifacts)."""
    fingerprints = sorted(set(fingerprints))
    if not fingerprints:
        raise UserError("Name at least one model fingerprint to export.")
    with connect(store) as con:
        rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM artifacts WHERE fingerprint IN (SELECT unnest(?)) "
                           "ORDER BY feature, action, key", [fingerprints]).fetchall()
    kinds = set(actions)
    if kinds:
        rows = [row for row in rows if f"{row[1]}:{row[2]}" in kinds]
    out.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same artifacts give the same bytes, so a re-export does not churn git
    with open(out, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        for row in rows:
            f.write((json.dumps(dict(zip(COLUMNS, row)), sort_keys=True) + "\n").encode())
    return len(rows)


def read_reference(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _genuine(row: dict) -> bool:
    return row.get("key") == artifact_key(row["feature"], row["action"], row["fingerprint"], row["params"],
                                          row["code_version"])


def reference_dir() -> Path:
    """DASH_REFERENCE_DIR, else data/reference. An empty folder leaves a store without the shipped artifacts, which
    is how `bench/first_open.py --export-reference` sees what the pages compute themselves."""
    return Path(os.environ.get(ENV_REFERENCE_DIR) or REFERENCE_DIR)


def import_reference(directory: Path | None = None, store: Path | None = None) -> ReferenceImport:
    """Add every shipped artifact (of `directory`, default `reference_dir()`) that the store lacks (ON CONFLICT DO
    NOTHING: computed ones win)."""
    files = sorted(Path(directory or reference_dir()).glob("*.jsonl.gz"))
    rows = [row for path in files for row in read_reference(path)]
    genuine = [row for row in rows if _genuine(row)]
    with connect(store) as con:
        before = con.execute("SELECT count(*) FROM artifacts").fetchone()[0]
        for row in genuine:
            con.execute(f"INSERT INTO artifacts ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
                        "ON CONFLICT (key) DO NOTHING", [row[c] for c in COLUMNS])
        after = con.execute("SELECT count(*) FROM artifacts").fetchone()[0]
    return ReferenceImport(len(files), len(rows), after - before, len(rows) - len(genuine))


_ensured: set[Path] = set()


def ensure_reference(store: Path | None = None, directory: Path | None = None) -> ReferenceImport | None:
    """import_reference once per process and store (about a second the first time, nothing after); None when
    the store cannot take them (a locked or read-only store is the store notice's business, not an error)."""
    path = Path(store or store_path())
    if path in _ensured:
        return None
    try:
        done = import_reference(directory, store=path)
    except StoreUnavailable:
        return None
    _ensured.add(path)
    return done
