"""Corpus jobs in the DuckDB store: one row per job (kind, corpus, config, model fingerprint, rows, checksum,
status) and one per shard (status, rows, file checksum, error), so the dashboard can list, watch and reopen
jobs, and a re-run processes only the shards not already done.

A job's identity is (kind, the task's key incl. the model fingerprint, the corpus spec); its shards are
identified by (path, size, mtime), so a crashed or pre-empted run resumes, and a shard edited since is redone.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from backend.corpus.dispatch import run_shards
from backend.corpus.engine import EngineConfig, ShardTask
from backend.corpus.output import DONE, EMPTY, FAILED, ShardResult, file_checksum, shard_file
from backend.corpus.shards import Shard, list_shards
from backend.errors import UserError
from backend.progress import Partial, Progress, report_partial, silent
from backend.store.corpus_tables import JobRow, Staleness, corpus_tables
from backend.store.db import store_path

RUNNING, FINISHED, WITH_FAILURES = "running", "done", "done with failed shards"
STALE = "stale: its process stopped; run it again to resume"  # shown for a running row whose heartbeat stopped
HEARTBEAT_S = 5.0  # a running job touches its row this often (a thread beside the shards)
STALE_AFTER_S = 60.0  # a "running" row untouched this long belongs to a process that died (killed, crashed)


def _staleness() -> Staleness:
    """How a status reads: a running row whose heartbeat is older than STALE_AFTER_S reads as STALE."""
    return Staleness(RUNNING, STALE, STALE_AFTER_S)


def jobs_root() -> Path:
    """Shard files live beside the store (data/jobs/<job_id>/)."""
    return Path(store_path()).parent / "jobs"


def job_id_of(kind: str, key: dict, corpus: str) -> str:
    text = json.dumps([kind, key, corpus], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class JobSummary:
    """processed: shards run now; skipped: already done before; failed: (shard path, error) of bad shards."""

    job_id: str
    kind: str
    out_dir: str
    shards: int
    processed: int
    skipped: int
    rows: int
    checksum: str
    status: str
    seconds: float
    failed: tuple[tuple[str, str], ...] = field(default=())
    notices: tuple[str, ...] = field(default=())

    def to_json(self) -> dict:
        return {**self.__dict__, "failed": [{"shard": p, "error": e} for p, e in self.failed],
                "notices": list(self.notices)}


def _done_before(job_id: str, shards: list[Shard], out_dir: Path) -> dict[str, dict]:
    """Shards recorded as done whose file is still there and unchanged (or recorded empty)."""
    with corpus_tables() as tables:
        frame = tables.shards_with_status(job_id, (DONE, EMPTY))
    wanted = {s.id: s for s in shards}
    out = {}
    for row in frame.to_dict(orient="records"):
        shard = wanted.get(row["shard_id"])
        if shard is None:
            continue
        path = shard_file(out_dir, shard.index, shard.id)
        if row["status"] == EMPTY or (path.is_file() and file_checksum(path) == row["checksum"]):
            out[shard.id] = row
    return out


def _record(job_id: str, result: ShardResult) -> None:
    with corpus_tables() as tables:
        tables.record_shard(job_id, result.shard_id, result.index, result.path, result.status, result.rows,
                            result.checksum, result.error, json.dumps(list(result.notices)), result.seconds)


def _upsert_job(job_id, kind, corpus, key, fingerprint, out_dir, shards, engine, status, seconds=0.0) -> None:
    with corpus_tables() as tables:
        tables.keep_only_shards(job_id, [s.id for s in shards])
        counts = tables.shard_counts(job_id, done=(DONE, EMPTY), failed=FAILED)
        checksum = hashlib.sha256(counts.checksums.encode()).hexdigest()[:20]
        tables.replace_job(JobRow(job_id, kind, corpus, json.dumps(key, sort_keys=True, default=str), fingerprint,
                                  str(out_dir), len(shards), counts.done, counts.failed, counts.rows, checksum, status,
                                  engine, seconds))


@contextmanager
def _heartbeat(job_id: str) -> Iterator[None]:
    """Touch the job's row every HEARTBEAT_S while the body runs: a row that stops being touched is stale (its
    process was killed), never "running" forever."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            try:
                with corpus_tables() as tables:
                    tables.touch(job_id, RUNNING)
            except UserError:  # the store is unavailable for a moment: the next beat tries again
                pass

    thread = threading.Thread(target=beat, name=f"heartbeat-{job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _run_pending(job_id, task, pending, out_dir, engine, shards, n_done, failed, notices, progress) -> None:
    for n, result in enumerate(run_shards(task, pending, out_dir, engine), start=1):
        if result.status == DONE and result.fingerprint != task.fingerprint:
            result = ShardResult(shard_id=result.shard_id, index=result.index, path=result.path, status=FAILED,
                                 error="the worker loaded a different model (fingerprint differs from the driver's)")
        _record(job_id, result)
        if result.status == FAILED:
            failed.append((result.path, result.error))
        notices += [f"{Path(result.path).name}: {text}" for text in result.notices]
        # the job's id: its finished shards' rows are in the store now, for a page to show while it runs
        report_partial(progress, Partial(job_id, n_done + n, len(shards), "shards"))
        progress((n_done + n) / len(shards), f"{n_done + n} of {len(shards)} shards ({Path(result.path).name}:"
                                                 f" {result.status})")


def run_job(kind: str, task: ShardTask, corpus: str, engine: EngineConfig = EngineConfig(),
            progress: Progress = silent) -> JobSummary:
    """Process every shard of `corpus` not already done for this (kind, task, corpus); record each as it ends."""
    start = time.perf_counter()
    shards = list_shards(corpus)
    spec = str(corpus)
    key = task.key()
    job_id = job_id_of(kind, key, spec)
    out_dir = jobs_root() / job_id
    done = _done_before(job_id, shards, out_dir)
    pending = [s for s in shards if s.id not in done]
    _upsert_job(job_id, kind, spec, key, task.fingerprint, out_dir, shards, engine.engine, RUNNING)
    progress(len(done) / len(shards), f"{len(done)} of {len(shards)} shards already done; {len(pending)} to run")
    failed, notices = [], []
    with _heartbeat(job_id):
        _run_pending(job_id, task, pending, out_dir, engine, shards, len(done), failed, notices, progress)
    seconds = time.perf_counter() - start
    status = WITH_FAILURES if failed else FINISHED
    _upsert_job(job_id, kind, spec, key, task.fingerprint, out_dir, shards, engine.engine, status, seconds)
    row = job(job_id)
    return JobSummary(job_id=job_id, kind=kind, out_dir=str(out_dir), shards=len(shards), processed=len(pending),
                      skipped=len(done), rows=int(row["rows"]), checksum=row["checksum"], status=status,
                      seconds=seconds, failed=tuple(failed), notices=tuple(notices))


def job(job_id: str) -> dict:
    with corpus_tables() as tables:
        found = tables.job(job_id, _staleness())
    if found is None:
        raise UserError(f"No corpus job {job_id!r} in the store.")
    return found


def list_jobs(kind: str | None = None) -> pd.DataFrame:
    """Jobs, newest first (one row each: progress counts, rows, checksum, status)."""
    with corpus_tables() as tables:
        return tables.jobs(kind, _staleness())


def job_shards(job_id: str) -> pd.DataFrame:
    with corpus_tables() as tables:
        return tables.shards(job_id)


def shard_files(job_id: str) -> list[Path]:
    """The job's Parquet files in corpus order (done shards only)."""
    record = job(job_id)
    frame = job_shards(job_id)
    frame = frame[frame["status"] == DONE]
    return [shard_file(record["out_dir"], int(i), s) for i, s in zip(frame["idx"], frame["shard_id"])]


def iter_tables(job_id: str, columns: list[str] | None = None) -> Iterator[pa.Table]:
    """The job's rows, one shard at a time, in corpus order (never the whole job in memory)."""
    for path in shard_files(job_id):
        yield pq.read_table(path, columns=columns)


def export_job(job_id: str, out: str | Path, columns: list[str] | None = None) -> int:
    """All rows of a job into one Parquet file (streamed shard by shard); returns the number of rows."""
    writer, rows = None, 0
    try:
        for table in iter_tables(job_id, columns):
            if writer is None:
                writer = pq.ParquetWriter(str(out), table.schema)
            writer.write_table(table)
            rows += table.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        pq.write_table(pa.table({}), str(out))
    return rows
