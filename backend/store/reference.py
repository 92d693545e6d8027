"""Reference artifacts: results this code computed on the embedded models, shipped in the repository and
imported into the store by `models prepare` (so by `make run`) and by the app when it first opens a store
(`ensure_reference`: a store made by hand, or pointed to by DASH_STORE, gets them too), so a newcomer's first view of a heavy page is
served from the store instead of minutes of CPU.

They are ordinary artifacts, keyed exactly like computed ones (feature, action, model fingerprint, canonical
config, code version): another model, another setting or a bumped code version simply misses them and
computes. An import never replaces an artifact already in the store and records no run (nobody asked for it);
it marks its rows `reference` (a user's own files: `imported`), so deleting runs never removes them.
Each row's key is recomputed on import, so a hand-edited row is refused rather than served under a wrong key.
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from backend.errors import UserError
from backend.store.artifacts import artifact_key
from backend.store.db import StoreUnavailable, connect, store_path
from backend.store.origin import IMPORTED, REFERENCE
from backend.store.reference_files import (ENV_REFERENCE_DIR, REFERENCE_DIR, read_reference, reference_dir,
                                           reference_files)

__all__ = ["COLUMNS", "ENV_REFERENCE_DIR", "REFERENCE_DIR", "ReferenceImport", "ensure_reference", "export_reference",
           "import_artifacts", "import_reference", "read_reference", "reference_dir"]
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


def _genuine(row: dict) -> bool:
    return row.get("key") == artifact_key(row["feature"], row["action"], row["fingerprint"], row["params"],
                                          row["code_version"])


def import_reference(directory: Path | None = None, store: Path | None = None) -> ReferenceImport:
    """Add every shipped artifact (of `directory`, default `reference_dir()`) that the store lacks, marked
    `reference` (ON CONFLICT DO NOTHING: computed ones win)."""
    return import_artifacts(Path(directory or reference_dir()), REFERENCE, store)


def import_artifacts(directory: Path, origin: str = IMPORTED, store: Path | None = None) -> ReferenceImport:
    """Add the artifacts of every *.jsonl.gz file in `directory` that the store lacks, with this origin (a user's
    own files: `imported`, which deleting runs never removes)."""
    files = reference_files(directory)
    rows = [row for path in files for row in read_reference(path)]
    genuine = list({row["key"]: row for row in reversed(rows) if _genuine(row)}.values())  # a key once: the first
    incoming = pa.table({c: [row[c] for row in genuine] for c in COLUMNS},
                        schema=pa.schema([(c, pa.float64() if c == "compute_seconds" else pa.string())
                                          for c in COLUMNS]))
    # one INSERT ... SELECT over the whole set: a statement per row took ~7 ms each (12 s for the shipped set)
    with connect(store) as con:
        before = con.execute("SELECT count(*) FROM artifacts").fetchall()[0][0]
        con.register("incoming", incoming)
        try:
            con.execute(f"INSERT INTO artifacts ({', '.join(COLUMNS)}, origin) SELECT {', '.join(COLUMNS)}, ? "
                        "FROM incoming ON CONFLICT (key) DO NOTHING", [origin])
        finally:
            con.unregister("incoming")
        after = con.execute("SELECT count(*) FROM artifacts").fetchone()[0]
    return ReferenceImport(files=len(files), offered=len(rows), imported=after - before,
                           refused=len(rows) - len(genuine))


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
