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
from backend.errors import UserError
from backend.store.migrate import migrate

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
        created TIMESTAMP NOT NULL DEFAULT current_timestamp,
        origin VARCHAR DEFAULT 'computed')""",  # backend.store.origin; older stores get it in migrate.py
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
    # added later: stores created before the column get it here (the browser session a run belongs to)
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS session VARCHAR DEFAULT ''",
    # 'done', or 'stopped': the user stopped it (Stop button, closed tab, Ctrl-C); such a run stored no result
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS status VARCHAR DEFAULT 'done'",
    # the artifacts a run read or wrote besides its own (runs.artifact_key): what clean-up must keep for it
    """CREATE TABLE IF NOT EXISTS run_artifacts (
        run_id VARCHAR NOT NULL,
        artifact_key VARCHAR NOT NULL,
        PRIMARY KEY (run_id, artifact_key))""",
]

LOCK_TIMEOUT_S = 60.0
_process_lock = threading.RLock()  # one connection at a time inside this process
_initialised: set[Path] = set()
_feature_tables: set[tuple[Path, int]] = set()  # (store file, id of a feature's schema) created in this process
_notices: dict[Path, str] = {}
_CORRUPTION = ("not a valid duckdb database", "could not read enough bytes", "corrupt", "checksum",
               "failed to read database header", "invalid block")


class StoreUnavailable(UserError):
    """The store cannot be used right now (read-only or missing location, lock held too long, damaged file).
    Computations still run; their results are not cached."""


def store_path() -> Path:
    return settings().store_path


def store_notice(path: Path | None = None) -> str | None:
    """What went wrong with the store in this process (shown on every page), or None."""
    return _notices.get(Path(path or store_path()))


def _is_lock_error(err: Exception) -> bool:
    text = str(err).lower()
    return "lock" in text or "conflict" in text or "being used by another process" in text


def _is_corruption(err: Exception) -> bool:
    text = str(err).lower()
    return any(marker in text for marker in _CORRUPTION)


def _unavailable(path: Path, reason: str) -> StoreUnavailable:
    _notices[path] = f"The result store ({path.name}) cannot be used: {reason}. Results are computed but not cached."
    return StoreUnavailable(_notices[path])


def _move_aside(path: Path) -> Path:
    """Keep a damaged store (never delete a user's results) and let a fresh one be created in its place."""
    kept = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    path.replace(kept)
    wal = path.with_name(path.name + ".wal")
    if wal.exists():
        wal.replace(kept.with_name(kept.name + ".wal"))
    _initialised.discard(path)
    _feature_tables.difference_update({entry for entry in _feature_tables if entry[0] == path})
    _notices[path] = (f"The result store was damaged and has been moved aside to {kept.name} (kept, not deleted); "
                      "a fresh store was started.")
    return kept


def _open(path: Path) -> duckdb.DuckDBPyConnection:
    """A connection with the schema in place; waits for other processes, moves a damaged file aside once."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _unavailable(path, f"its folder cannot be created ({err.strerror})") from None
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    delay, moved = 0.01, False
    while True:
        try:
            con = duckdb.connect(str(path))
            if path not in _initialised:
                for statement in SCHEMA:
                    con.execute(statement)
                migrate(con)
                _initialised.add(path)
            return con
        except duckdb.Error as err:
            if _is_lock_error(err) and time.monotonic() <= deadline:
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)
            elif _is_lock_error(err):
                raise _unavailable(path, f"another process has held it for over {LOCK_TIMEOUT_S:g} s") from None
            elif _is_corruption(err) and not moved and path.exists():
                _move_aside(path)
                moved = True
            else:
                raise _unavailable(path, str(err).split("\n")[0]) from None


@contextmanager
def connect(path: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the store, run the body in one transaction, commit, close. Retries on lock conflicts; a damaged
    store is moved aside; a store that cannot be used raises StoreUnavailable."""
    path = Path(path or store_path())
    with _process_lock:
        con = _open(path)
        damaged = False
        try:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException as err:
                damaged = isinstance(err, duckdb.Error) and _is_corruption(err)
                if not damaged:
                    con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        except duckdb.Error as err:
            if not (damaged or _is_corruption(err)):
                raise
            damaged = True
        finally:
            con.close()
            if damaged and path.exists():
                _move_aside(path)
        if damaged:
            raise StoreUnavailable(_notices[path])


@contextmanager
def connect_with(schema: list[str]) -> Iterator[duckdb.DuckDBPyConnection]:
    """`connect()` with a feature's own tables created first (once per store file and process)."""
    with connect() as con:
        entry = (Path(store_path()), id(schema))
        if entry not in _feature_tables:
            for statement in schema:
                con.execute(statement)
            _feature_tables.add(entry)
        yield con
