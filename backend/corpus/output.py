"""Per-shard outputs: one Parquet file per input shard, written atomically (temporary file, then rename), so a
killed worker leaves no partial shard behind and a retried one replaces nothing but its own file."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DONE, EMPTY, FAILED = "done", "empty", "failed"


@dataclass(frozen=True)
class ShardResult:
    """What a worker reports for one shard: status DONE / EMPTY / FAILED, rows written, the file's checksum,
    the error in words (FAILED), per-shard notices and the model fingerprint that computed it."""

    shard_id: str
    index: int
    path: str
    status: str
    rows: int = 0
    checksum: str = ""
    error: str = ""
    seconds: float = 0.0
    fingerprint: str = ""
    notices: tuple[str, ...] = field(default=())

    def to_row(self) -> dict:
        return {**self.__dict__, "notices": list(self.notices)}


def shard_file(out_dir: str | Path, index: int, shard_id: str) -> Path:
    return Path(out_dir) / f"shard-{index:06d}-{shard_id}.parquet"


def file_checksum(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:20]


def write_shard(table: pa.Table, path: Path) -> str:
    """Write `table` to `path` atomically; returns the file checksum."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return file_checksum(path)
