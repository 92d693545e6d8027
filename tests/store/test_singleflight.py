"""Identical requests at the same time compute once: 8 threads and 4 processes, one computation."""
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from backend.store import ModelRef, cached, list_runs, while_waiting
from backend.store.singleflight import key_lock
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
MODEL = ModelRef("m", "sf")


@dataclass(frozen=True)
class Request:
    prompt: str


def _note(log: Path, event: str) -> None:
    with log.open("a") as f:
        f.write(event + "\n")


def _compute_until_waited_for(log: Path, waiters: int):
    """A computation that lasts until `waiters` identical requests wait for it (each notes so in the log)."""
    def compute():
        _note(log, "computed")
        wait_until(lambda: log.read_text().count("waiting") >= waiters, 120, f"{waiters} requests waiting")
        return {"answer": 42}
    return compute


def _request(log: Path, prompt: str, waiters: int) -> int:
    """One request, noting in the log when another one's computation makes it wait."""
    with while_waiting(lambda: _note(log, "waiting")):
        return cached("sf", "run", MODEL, Request(prompt), _compute_until_waited_for(log, waiters)).value["answer"]


# A request from another process: the same request, the same key.
PROCESS = """
import sys
from pathlib import Path
from tests.store.test_singleflight import _request
print(_request(Path(sys.argv[1]), "same", int(sys.argv[2])))
"""


def test_eight_threads_and_four_processes_compute_once(fresh_store, tmp_path):
    log = tmp_path / "computations.log"
    log.touch()
    waiters = 8 + 4 - 1  # the computation lasts until every other request waits for it
    procs = [subprocess.Popen([sys.executable, "-c", PROCESS, str(log), str(waiters)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(_request(log, "same", waiters))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outputs = [p.communicate(timeout=180) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
        assert out.strip() == "42"
    assert answers == [42] * 8
    assert log.read_text().count("computed") == 1 and log.read_text().count("waiting") == waiters
    runs = list_runs()
    assert len(runs) == 12 and int((~runs["cached"]).sum()) == 1


def test_a_dead_holder_does_not_block_the_next_request(fresh_store, tmp_path):
    """The OS drops a killed process's lock: the next request computes at once instead of waiting it out."""
    from backend.store.db import store_path

    script = ("import sys; from pathlib import Path; from backend.store.singleflight import key_lock\n"
              "with key_lock(Path(sys.argv[1]), 'k'):\n    print('held', flush=True); sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", script, str(store_path())], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # holds the lock until killed (or its stdin closes)
    assert holder.stdout.readline().strip() == "held"
    with key_lock(store_path(), "k", wait_s=0.2) as got:
        assert not got  # held by the live process
    holder.kill()
    holder.wait()
    with key_lock(store_path(), "k", wait_s=5) as got:
        assert got


def test_an_unwritable_lock_folder_computes_without_the_lock(tmp_path):
    blocker = tmp_path / "store.duckdb.locks"
    blocker.write_text("a file where the lock folder should be")
    with key_lock(tmp_path / "store.duckdb", "k") as got:
        assert not got


def test_a_waiting_request_is_told_once_why_it_waits(fresh_store, tmp_path):
    """The second session on a cold page: its callback fires (the page says it waits for the other one),
    then it is served the first one's artifact."""
    log = tmp_path / "computations.log"
    log.touch()
    told = []
    first = threading.Thread(target=lambda: _request(log, "cold", 1))  # computes until the second one waits
    first.start()
    wait_until(lambda: "computed" in log.read_text(), 120, "the first request to start computing")
    with while_waiting(lambda: (told.append(1), _note(log, "waiting"))):
        served = cached("sf", "run", MODEL, Request("cold"), _compute_until_waited_for(log, 1))
    first.join()
    assert told == [1] and served.cached and log.read_text().count("computed") == 1
    with while_waiting(lambda: told.append(2)):
        assert cached("sf", "run", MODEL, Request("cold"), _compute_until_waited_for(log, 1)).cached
    assert told == [1]  # a hit waits for nobody
