"""Several processes and threads share one store file without lock errors or partial results."""
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from backend.store import ModelRef, cached, list_runs, status

WORKER = """
import sys, time
from dataclasses import dataclass
from backend.store import ModelRef, cached

@dataclass(frozen=True)
class Cfg:
    worker: int
    i: int

for i in range(25):
    r = cached("conc", "run", ModelRef("m", "ff"), Cfg(int(sys.argv[1]), i % 5), lambda: {"payload": "x" * 20000})
    assert r.value == {"payload": "x" * 20000}
print("ok")
"""

ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_share_the_store(fresh_store):
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(w)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
        assert out.strip() == "ok"
    assert status().runs == 50
    assert status().artifacts == 10
    assert list_runs()["cached"].sum() == 40


@dataclass(frozen=True)
class Cfg:
    i: int


def test_threads_share_the_store(fresh_store):
    errors = []

    def work(t):
        try:
            for i in range(10):
                cached("threads", "run", ModelRef("m", "ff"), Cfg(i), lambda: list(range(100)))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert status().runs == 40 and status().artifacts == 10
