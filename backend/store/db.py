"""Short-lived DuckDB connections that several threads and processes can share.

DuckDB lets only one process hold a database file open for writing. The app (many browser
sessions = threads) and CLI processes therefore open the file per operation, keep it for
milliseconds, and retry with backoff while another process holds the lock. Every write is a
single transaction, so a reader never sees a half-written artifact.
"""
from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from backend.config import settings

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS artifacts (
        key VARCHAR PRIMARY KEY,
        feature VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        fingerprint VARCHAR NOT NULL,
        params VARCHAR NOT NULL,
        code_version VARCHAR NOT NULL,
        payload VARCHAR NOT NULL,
        compute_seconds DOUBLE NOT NULL,
        created TIMESTAMP NOT NULL DEFAULT current_timestamp)""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id VARCHAR PRIMARY KEY,
        feature VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        model_id VARCHAR NOT NULL,
        fingerprint VARCHAR NOT NULL,
        params VARCHAR NOT NULL,
        artifact_key VARCHAR NOT NULL,
        seconds DOUBLE NOT NULL,
        cached BOOLEAN NOT NULL,
        created TIMESTAMP NOT NULL DEFAULT current_timestamp)""",
]

LOCK_TIMEOUT_S = 60.0
_process_lock = threading.RLock()  # one connection at a time inside this process
_initialised: set[Path] = set()


def store_path() -> Path:
    return settings().store_path


def _is_lock_error(err: Exception) -> bool:
    text = str(err).lower()
    return "lock" in text or "conflict" in text or "being used by another process" in text


@contextmanager
def connect(path: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the store, run the body in one transaction, commit, close. Retries on lock conflicts."""
    path = Path(path or store_path())
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    delay = 0.01
    with _process_lock:
        while True:
            try:
                con = duckdb.connect(str(path))
                break
            except duckdb.Error as err:  # another process holds the file
                if not _is_lock_error(err) or time.monotonic() > deadline:
                    raise
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)
        try:
            if path not in _initialised:
                for statement in SCHEMA:
                    con.execute(statement)
                _initialised.add(path)
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        finally:
            con.close()
