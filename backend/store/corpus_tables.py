"""The corpus jobs' tables: one row per job (`corpus_jobs`) and one per shard (`corpus_shards`). Every read and
write of them is here; what a job is, when it is done and how its checksum is made are backend.corpus.jobs'.

`corpus_tables()` opens one short transaction on the store with the tables in place, so a job's row is rewritten
from its shards' rows without another process's shard landing in between.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import pandas as pd

from backend.store.db import connect_with

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS corpus_jobs (
        job_id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, corpus VARCHAR NOT NULL, config VARCHAR NOT NULL,
        fingerprint VARCHAR NOT NULL, out_dir VARCHAR NOT NULL, shards INTEGER NOT NULL, done_shards INTEGER NOT NULL,
        failed_shards INTEGER NOT NULL, rows BIGINT NOT NULL, checksum VARCHAR NOT NULL, status VARCHAR NOT NULL,
        engine VARCHAR NOT NULL, seconds DOUBLE NOT NULL,
        created TIMESTAMP NOT NULL DEFAULT current_timestamp, updated TIMESTAMP NOT NULL DEFAULT current_timestamp)""",
    """CREATE TABLE IF NOT EXISTS corpus_shards (
        job_id VARCHAR NOT NULL, shard_id VARCHAR NOT NULL, idx INTEGER NOT NULL, path VARCHAR NOT NULL,
        status VARCHAR NOT NULL, rows BIGINT NOT NULL, checksum VARCHAR NOT NULL, error VARCHAR NOT NULL,
        notices VARCHAR NOT NULL, seconds DOUBLE NOT NULL, PRIMARY KEY (job_id, shard_id))""",
]


@dataclass(frozen=True)
class Staleness:
    """How a job's status reads: a `running` row whose heartbeat (`updated`) is older than `after_s` belongs to a
    process that died, and reads as `label`."""

    running: str
    label: str
    after_s: float

    def status_sql(self) -> str:
        return (f"CASE WHEN status = '{self.running}' AND updated < current_timestamp::TIMESTAMP - "
                f"to_milliseconds({int(self.after_s * 1000)}) THEN '{self.label}' ELSE status END")


@dataclass(frozen=True)
class ShardCounts:
    """A job's shards as recorded: done (or empty), failed, rows, and their checksums joined in corpus order."""

    done: int
    failed: int
    rows: int
    checksums: str


@dataclass(frozen=True)
class JobRow:
    job_id: str
    kind: str
    corpus: str
    config: str  # the task's key, as JSON
    fingerprint: str
    out_dir: str
    shards: int
    done_shards: int
    failed_shards: int
    rows: int
    checksum: str
    status: str
    engine: str
    seconds: float


class CorpusTables:
    """The corpus jobs' tables on one open transaction."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self._con = con

    # ---------------------------------------------------------------- shards
    def shards_with_status(self, job_id: str, statuses: Sequence[str]) -> pd.DataFrame:
        """shard_id, status, rows, checksum of the job's shards whose status is one of `statuses`."""
        marks = ", ".join("?" * len(statuses))
        return self._con.execute(f"SELECT shard_id, status, rows, checksum FROM corpus_shards WHERE job_id = ? AND "
                                 f"status IN ({marks})", [job_id, *statuses]).df()

    def record_shard(self, job_id: str, shard_id: str, index: int, path: str, status: str, rows: int,
                     checksum: str, error: str, notices: str, seconds: float) -> None:
        """A shard's row (notices as JSON), replacing any earlier one of the same shard."""
        self._con.execute("INSERT OR REPLACE INTO corpus_shards VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          [job_id, shard_id, index, path, status, rows, checksum, error, notices, seconds])

    def keep_only_shards(self, job_id: str, shard_ids: Sequence[str]) -> None:
        """Drop the job's shard rows that are no longer among its shards (files removed from the corpus)."""
        self._con.execute("DELETE FROM corpus_shards WHERE job_id = ? AND shard_id NOT IN (SELECT unnest(?))",
                          [job_id, list(shard_ids)])

    def shard_counts(self, job_id: str, done: Sequence[str], failed: str) -> ShardCounts:
        """Counts of shards with a status in `done` and with status `failed`, total rows, checksums by index."""
        marks = ", ".join("?" * len(done))
        row = self._con.execute(f"SELECT count(*) FILTER (WHERE status IN ({marks})), count(*) FILTER (WHERE status = "
                                "?), coalesce(sum(rows), 0), coalesce(string_agg(checksum, '|' ORDER BY idx), '') "
                                "FROM corpus_shards WHERE job_id = ?", [*done, failed, job_id]).fetchone()
        return ShardCounts(*row)

    def shards(self, job_id: str) -> pd.DataFrame:
        """Every shard row of the job, in corpus order."""
        return self._con.execute("SELECT * FROM corpus_shards WHERE job_id = ? ORDER BY idx", [job_id]).df()

    # ---------------------------------------------------------------- jobs
    def replace_job(self, job: JobRow) -> None:
        self._con.execute("DELETE FROM corpus_jobs WHERE job_id = ?", [job.job_id])
        self._con.execute("INSERT INTO corpus_jobs (job_id, kind, corpus, config, fingerprint, out_dir, shards, "
                          "done_shards, failed_shards, rows, checksum, status, engine, seconds) VALUES (?, ?, ?, ?, ?, "
                          "?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          [job.job_id, job.kind, job.corpus, job.config, job.fingerprint, job.out_dir, job.shards,
                           job.done_shards, job.failed_shards, job.rows, job.checksum, job.status, job.engine,
                           job.seconds])

    def touch(self, job_id: str, status: str) -> None:
        """Mark the job's row as updated now, while its status is `status` (a heartbeat)."""
        self._con.execute("UPDATE corpus_jobs SET updated = current_timestamp WHERE job_id = ? AND status = ?",
                          [job_id, status])

    def job(self, job_id: str, staleness: Staleness) -> dict | None:
        """The job's row (column -> value, its status as `staleness` reads it), None when there is none."""
        cur = self._con.execute(f"SELECT * REPLACE ({staleness.status_sql()} AS status) FROM corpus_jobs "
                                "WHERE job_id = ?", [job_id])
        found = cur.fetchone()
        return None if found is None else dict(zip([d[0] for d in cur.description], found))

    def jobs(self, kind: str | None, staleness: Staleness) -> pd.DataFrame:
        """Jobs (of `kind`, or all), most recently updated first."""
        where, args = ("WHERE kind = ?", [kind]) if kind else ("", [])
        return self._con.execute(f"SELECT * REPLACE ({staleness.status_sql()} AS status) FROM corpus_jobs {where} "
                                 "ORDER BY updated DESC", args).df()


@contextmanager
def corpus_tables() -> Iterator[CorpusTables]:
    """The corpus jobs' tables on one short store transaction."""
    with connect_with(SCHEMA) as con:
        yield CorpusTables(con)
