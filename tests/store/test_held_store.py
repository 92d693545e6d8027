"""A process keeps the store open while it uses it, and lets it go when idle or when another process asks."""
import subprocess
import sys
from pathlib import Path

import duckdb

from backend.store import db
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]

# Another process that writes one row through the store's own connect(), and says how long it waited.
OTHER = """
import sys, time
from backend.store.db import connect
start = time.monotonic()
with connect() as con:
    con.execute("CREATE TABLE IF NOT EXISTS other (n INTEGER)")
    con.execute("INSERT INTO other VALUES (1)")
print(round(time.monotonic() - start, 2))
"""


def _count_runs() -> int:
    with db.connect() as con:
        return con.execute("SELECT count(*) FROM runs").fetchone()[0]


def test_an_idle_store_is_closed_and_a_busy_one_kept(fresh_store):
    _count_runs()
    assert fresh_store in db._held  # kept open for the next operation
    # the idle timeout is the subject: its clock closes the store, some time after HOLD_IDLE_S without an operation
    wait_until(lambda: fresh_store not in db._held, db.HOLD_IDLE_S + 60, "the idle store to be let go")
    with duckdb.connect(str(fresh_store), read_only=True) as con:  # another process could open it now
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_another_process_gets_the_store_while_this_one_keeps_using_it(fresh_store):
    """This process runs an operation every 20 ms (never idle for HOLD_IDLE_S): the other one still gets in, on
    asking, and this one carries on afterwards (how long the other waits is measured by no test: a generous
    deadline only keeps a regression from hanging the suite)."""
    _count_runs()
    other = subprocess.Popen([sys.executable, "-c", OTHER], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)

    def other_finished_while_this_one_works() -> bool:
        _count_runs()  # this process's own use of the store, about every 20 ms: never idle for HOLD_IDLE_S
        try:
            other.wait(timeout=0.02)  # ends at once when the other process does
        except subprocess.TimeoutExpired:
            return False
        return True

    wait_until(other_finished_while_this_one_works, 60, "the other process to get the store")
    out, err = other.communicate(timeout=10)
    assert other.returncode == 0, err
    with db.connect() as con:
        assert con.execute("SELECT count(*) FROM other").fetchone()[0] == 1


def test_a_store_file_replaced_outside_is_opened_afresh(fresh_store, tmp_path):
    _count_runs()
    db.release()
    copy = tmp_path / "copy.duckdb"
    with duckdb.connect(str(fresh_store)) as con:
        con.execute("INSERT INTO runs (run_id, feature, action, model_id, fingerprint, params, artifact_key, "
                    "seconds, cached) VALUES ('r1', 'f', 'a', 'm', 'fp', '{}', 'k', 1.0, false)")
    fresh_store.replace(copy)  # keep the file with one run aside; the next operation starts a fresh store
    assert _count_runs() == 0
    copy.replace(fresh_store)  # put it back while this process holds the fresh one
    assert _count_runs() == 1
