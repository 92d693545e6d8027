"""Identical requests at the same time compute once: 8 threads and 4 processes, one computation."""
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from backend.store import ModelRef, cached, list_runs
from backend.store.singleflight import key_lock

ROOT = Path(__file__).resolve().parents[2]
MODEL = ModelRef("m", "sf")


@dataclass(frozen=True)
class Request:
    prompt: str


def _slow_compute(log: Path):
    def compute():
        with log.open("a") as f:
            f.write("computed\n")
        time.sleep(1.0)  # long enough for every other request to arrive while this one runs
        return {"answer": 42}
    return compute


PROCESS = """
import sys, time
from pathlib import Path
from dataclasses import dataclass
from backend.store import ModelRef, cached

@dataclass(frozen=True)
class Request:
    prompt: str

def compute():
    with Path(sys.argv[1]).open("a") as f:
        f.write("computed\\n")
    time.sleep(1.0)
    return {"answer": 42}

print(cached("sf", "run", ModelRef("m", "sf"), Request("same"), compute).value["answer"])
"""


def test_eight_threads_and_four_processes_compute_once(fresh_store, tmp_path):
    log = tmp_path / "computations.log"
    log.touch()
    procs = [subprocess.Popen([sys.executable, "-c", PROCESS, str(log)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(
        cached("sf", "run", MODEL, Request("same"), _slow_compute(log)).value["answer"])) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    outputs = [p.communicate(timeout=180) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
        assert out.strip() == "42"
    assert answers == [42] * 8
    assert log.read_text().count("computed") == 1
    runs = list_runs()
    assert len(runs) == 12 and int((~runs["cached"]).sum()) == 1


def test_a_dead_holder_does_not_block_the_next_request(fresh_store, tmp_path):
    """The OS drops a killed process's lock: the next request computes at once instead of waiting it out."""
    from backend.store.db import store_path

    script = ("import sys, time; from pathlib import Path; from backend.store.singleflight import key_lock\n"
              "with key_lock(Path(sys.argv[1]), 'k'):\n    print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", script, str(store_path())], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True)
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
    from backend.store import while_waiting

    log = tmp_path / "computations.log"
    log.touch()
    told = []
    first = threading.Thread(target=lambda: cached("sf", "run", MODEL, Request("cold"), _slow_compute(log)))
    first.start()
    while log.read_text().count("computed") == 0:
        time.sleep(0.01)
    with while_waiting(lambda: told.append(1)):
        served = cached("sf", "run", MODEL, Request("cold"), _slow_compute(log))
    first.join()
    assert told == [1] and served.cached and log.read_text().count("computed") == 1
    with while_waiting(lambda: told.append(2)):
        assert cached("sf", "run", MODEL, Request("cold"), _slow_compute(log)).cached
    assert told == [1]  # a hit waits for nobody
