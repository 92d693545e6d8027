"""CORPUS specs: a file, a directory (its JSONL / Parquet / TXT files, recursively) or a glob, as sorted shards.

A shard's identity is its resolved path, size and modification time: a shard rewritten since a job ran is a
new shard, so a re-run recomputes it instead of serving stale rows.
"""
from __future__ import annotations

import glob
import hashlib
from dataclasses import dataclass
from pathlib import Path

from backend.errors import UserError

SHARD_SUFFIXES = (".jsonl", ".json", ".ndjson", ".parquet", ".pq", ".txt")


@dataclass(frozen=True)
class Shard:
    """index: position in the corpus (the output order); path: absolute; id: content identity (path, size, mtime)."""

    index: int
    path: str
    size: int
    mtime_ns: int

    @property
    def id(self) -> str:
        return hashlib.sha256(f"{self.path}\x00{self.size}\x00{self.mtime_ns}".encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        return Path(self.path).name


def _is_shard(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in SHARD_SUFFIXES and not path.name.startswith(".")


def list_shards(corpus: str | Path) -> list[Shard]:
    """The shards of CORPUS in a stable order (sorted paths); a UserError when there is none."""
    spec = str(corpus)
    path = Path(spec).expanduser()
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if _is_shard(p))
    elif path.is_file():
        if path.suffix.lower() not in SHARD_SUFFIXES:
            raise UserError(f"Unsupported corpus file {path.name!r}: use .jsonl, .parquet or .txt shards.")
        found = [path]
    else:
        found = sorted(p for p in map(Path, glob.glob(spec, recursive=True)) if _is_shard(p))
    if not found:
        raise UserError(f"No corpus shards (.jsonl, .parquet, .txt) found at {spec!r}.")
    shards = []
    for index, p in enumerate(found):
        stat = p.stat()
        shards.append(Shard(index=index, path=str(p.resolve()), size=stat.st_size, mtime_ns=stat.st_mtime_ns))
    return shards

