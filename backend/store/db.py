"""DuckDB connections that several threads and processes can share.

DuckDB lets only one process hold a database file open for writing. The app (many browser sessions = threads)
and CLI processes therefore take turns: a process keeps the file open while it is using it (opening and closing
it cost ~30 ms of CPU per operation, and under a lab's load the app's page runs queued behind that), and lets it
go once it has been idle for HOLD_IDLE_S or as soon as another process asks for it. A process that finds the file
locked says so by touching `<store>.wanted` and retries with backoff; the holder closes the file after its current
transaction. Inside a process one transaction runs at a time. Every write is a single transaction, so a reader
never sees a half-written artifact.
"""
from __future__ import annotations

import atexit
import os
import random
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from backend.config import settings
from backend.errors import UserError
from backend.store.migrate import migrate
from backend.unicode_text import visible

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
HOLD_IDLE_S = 1.0  # a process closes the store after this long without an operation
WANTED_FRESH_S = 1.0  # another process touched <store>.wanted within this: close after the current transaction
_process_lock = threading.RLock()  # one transaction at a time inside this process (nested ones: the same thread)
_initialised: set[Path] = set()
_feature_tables: set[tuple[Path, int]] = set()  # (store file, id of a feature's schema) created in this process
_notices: dict[Path, str] = {}


class StoreUnavailable(UserError):
    """The store cannot be used right now (read-only or missing location, lock held too long, damaged file).
    Computations still run; their results are not cached."""


def store_path() -> Path:
    return settings().store_path


def store_notice(path: Path | None = None) -> str | None:
    """What went wrong with the store in this process (shown on every page), or None."""
    return _notices.get(Path(path or store_path()))


def _locked_elsewhere(path: Path) -> bool:
    """Whether another process holds DuckDB's lock on the file: asked of the operating system (a non-blocking
    POSIX record lock, the kind DuckDB takes), never read from an error's wording. Only called while this process
    has no connection to the file (closing our probe would otherwise drop our own connection's lock)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no way to ask; an I/O error while the file is held elsewhere is a lock
        return True
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def _is_lock_error(err: Exception, path: Path) -> bool:
    """DuckDB reports a lock as an I/O error (IOException) on opening; the lock itself is asked of the OS. A
    checksum error "... in block at location 12288" is a plain duckdb.Error and no lock, whatever its words."""
    return isinstance(err, duckdb.IOException) and path.exists() and _locked_elsewhere(path)


# not FatalException: DuckDB invalidates a healthy database with it after a failed write (a full disk)
_DAMAGE_TYPES = (duckdb.SerializationException,)
_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


FULL_DISK_BYTES = 16 * 2**20  # an I/O error with less free space than this is a full disk, not a damaged file


# What a failed write raises (a full disk: "Failed to commit: Could not write file ... No space left on device", a
# TransactionException; DuckDB may then invalidate the connection with a FatalException): the transaction rolls back
_WRITE_FAILURES = (duckdb.TransactionException, duckdb.IOException, duckdb.FatalException,
                   duckdb.OutOfMemoryException)


def _disk_has_room(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent).free >= FULL_DISK_BYTES
    except OSError:
        return False


def _is_corruption(err: Exception, path: Path, *, probe: bool = True) -> bool:
    """A damaged file, told by the error's type: DuckDB raises its checksum and block errors as the plain
    duckdb.Error (or a serialisation / internal / fatal error); an I/O error on opening a readable file that is not
    locked and lacks DuckDB's header magic is a file that is not (or no longer) a database."""
    if not isinstance(err, duckdb.Error) or isinstance(err, (duckdb.ConstraintException, duckdb.CatalogException,
                                                             duckdb.ParserException, duckdb.BinderException,
                                                             duckdb.InterruptException)):
        return False
    if type(err) is duckdb.Error or isinstance(err, _DAMAGE_TYPES):
        return path.exists()
    if not probe:  # inside a transaction this process holds the lock: an I/O error reading the file is damage
        return isinstance(err, duckdb.IOException) and path.exists() and _disk_has_room(path)  # (a truncated file)
    if isinstance(err, duckdb.IOException) and path.exists() and os.access(path, os.R_OK | os.W_OK):
        if _locked_elsewhere(path):
            return False
        try:
            with open(path, "rb") as f:
                head = f.read(12)
        except OSError:
            return False
        return head[8:12] != _MAGIC or path.stat().st_size < 3 * 4096  # no header, or cut inside its headers
    return False


def _unavailable(path: Path, reason: str) -> StoreUnavailable:
    _notices[path] = f"The result store ({path.name}) cannot be used: {reason}. Results are computed but not cached."
    return StoreUnavailable(_notices[path])


def _move_aside(path: Path) -> Path:
    """Keep a damaged store (never delete a user's results) and let a fresh one be created in its place."""
    _drop(path)
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


@dataclass
class _Held:
    """This process's open connection to a store file."""
    con: duckdb.DuckDBPyConnection
    pid: int
    file_state: tuple | None = None  # the file's (inode, size, mtime) after this process's last transaction
    last_used: float = 0.0
    open_transactions: int = 0  # transactions of the thread holding _process_lock (nested connect calls)


_held: dict[Path, _Held] = {}
_leaked: list[duckdb.DuckDBPyConnection] = []  # a forked child's copies of its parent's connections: never closed
_monitor: threading.Thread | None = None


def _file_state(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _wanted_marker(path: Path) -> Path:
    return path.with_name(path.name + ".wanted")


def _ask_for(path: Path) -> None:
    """Tell the process holding the store that this one (its pid) is waiting for it."""
    try:
        _wanted_marker(path).write_text(str(os.getpid()))
    except OSError:
        pass  # a read-only folder: the holder lets go once idle


def _wanted(path: Path) -> bool:
    """Another process asked for the store within the last WANTED_FRESH_S."""
    marker = _wanted_marker(path)
    try:
        if time.time() - marker.stat().st_mtime >= WANTED_FRESH_S:
            return False
        return marker.read_text().strip() != str(os.getpid())
    except OSError:
        return False


def _drop(path: Path) -> None:
    held = _held.get(path)
    if held is None:
        return
    try:
        held.con.close()
    except duckdb.Error:
        pass
    finally:  # forgotten only once closed: whoever sees it gone from _held may open the file with other settings
        _held.pop(path, None)


def release(path: Path | None = None) -> None:
    """Close this process's connection to the store (all stores when `path` is None); the next operation reopens
    it. For code that reads the file by other means, and at the end of a CLI command."""
    with _process_lock:
        for held_path in [Path(path)] if path is not None else list(_held):
            _drop(held_path)


def _watch_held() -> None:
    """Close held stores that went idle or that another process asked for; ends when none is held."""
    global _monitor
    while True:
        time.sleep(0.1)
        if not _process_lock.acquire(blocking=False):
            continue
        try:
            now = time.monotonic()
            for path, held in list(_held.items()):
                if now - held.last_used > HOLD_IDLE_S or _wanted(path):
                    _drop(path)
            if not _held:
                _monitor = None
                return
        finally:
            _process_lock.release()


def _held_connection(path: Path) -> duckdb.DuckDBPyConnection:
    """This process's connection to the store, opened if need be. A file changed since this process's last
    transaction (replaced, truncated: not by DuckDB, which cannot write it while this process holds it) is opened
    afresh."""
    global _monitor
    held = _held.get(path)
    if held is not None and not held.open_transactions and _file_state(path) != held.file_state:
        _drop(path)
        held = None
    if held is None:
        con = _open(path)
        held = _held[path] = _Held(con, os.getpid(), _file_state(path), time.monotonic())
        if _monitor is None:
            _monitor = threading.Thread(target=_watch_held, name="store-release", daemon=True)
            _monitor.start()
    held.open_transactions += 1
    return held.con


def _after_transaction(path: Path) -> None:
    held = _held.get(path)
    if held is None:
        return
    held.open_transactions -= 1
    if held.open_transactions:
        return  # an enclosing transaction of this thread still uses the connection
    if _wanted(path):
        _drop(path)
    else:
        held.file_state, held.last_used = _file_state(path), time.monotonic()


def _forget_in_child() -> None:
    """A forked child must not use, nor close (closing writes a checkpoint), its parent's connections."""
    global _monitor, _process_lock
    _leaked.extend(held.con for held in _held.values())
    _held.clear()
    _monitor = None
    _process_lock = threading.RLock()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(release)


def _open(path: Path) -> duckdb.DuckDBPyConnection:
    """A connection with the schema in place; waits for other processes, moves a damaged file aside once."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _unavailable(path, f"its folder cannot be created ({err.strerror})") from None
    if not path.exists():
        _initialised.discard(path)  # deleted or moved away since: a fresh file needs the schema
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    delay, moved, unexplained = 0.01, False, 0
    while True:
        con = None
        try:
            con = duckdb.connect(str(path))
            if path not in _initialised:
                for statement in SCHEMA:
                    con.execute(statement)
                migrate(con)
                _initialised.add(path)
            return con
        except duckdb.Error as err:
            if con is not None:
                con.close()  # before the lock probe: closing the probe's descriptor would drop this one's lock
            locked = _is_lock_error(err, path)
            # an I/O error whose lock was gone by the time the OS was asked (the holder just let go): try again
            transient = (not locked and isinstance(err, duckdb.IOException) and not _is_corruption(err, path)
                         and unexplained < 5)
            if (locked or transient) and time.monotonic() <= deadline:
                unexplained += transient
                _ask_for(path)
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.5)
            elif locked:
                raise _unavailable(path, f"another process has held it for over {LOCK_TIMEOUT_S:g} s") from None
            elif _is_corruption(err, path) and not moved:
                _move_aside(path)
                moved = True
            else:
                raise _unavailable(path, visible(str(err).split("\n")[0])) from None


@contextmanager
def connect(path: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Run the body in one transaction on the store, commit. Waits while another process holds the store; a
    damaged store is moved aside; a store that cannot be used raises StoreUnavailable."""
    path = Path(path or store_path())
    with _process_lock:
        base = _held_connection(path)
        con, damaged, failed = None, False, None
        try:
            con = base.cursor()  # its own transaction, beside an enclosing one of this thread
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException as err:
                damaged = isinstance(err, duckdb.Error) and _is_corruption(err, path, probe=False)
                if not damaged:
                    try:
                        con.execute("ROLLBACK")
                    except duckdb.Error:  # the write failure below invalidated the connection: nothing to undo
                        pass
                raise
            con.execute("COMMIT")
        except duckdb.Error as err:
            if isinstance(err, _WRITE_FAILURES) and not _is_corruption(err, path, probe=False):
                failed = err  # a full disk: the whole transaction rolled back; the file is sound
            elif not (damaged or _is_corruption(err, path, probe=False)):
                raise
            else:
                damaged = True
        finally:
            if con is not None:
                con.close()
            if damaged:
                _drop(path)  # an enclosing transaction of this thread fails on the damaged file too
                if path.exists():
                    _move_aside(path)
            elif failed is not None:
                _drop(path)  # DuckDB may have invalidated the connection; the next transaction opens afresh
            else:
                _after_transaction(path)
        if damaged:
            raise StoreUnavailable(_notices[path])
        if failed is not None:
            why = ("the disk holding it is full" if not _disk_has_room(path)
                   else f"a write failed ({visible(str(failed).splitlines()[0])})")
            raise _unavailable(path, f"{why}; nothing of that write was kept") from None


@contextmanager
def connect_with(schema: list[str], path: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """`connect(path)` with a feature's own tables created first (once per store file and process)."""
    with connect(path) as con:
        entry = (Path(path or store_path()), id(schema))
        if entry not in _feature_tables:
            for statement in schema:
                con.execute(statement)
            _feature_tables.add(entry)
        yield con
