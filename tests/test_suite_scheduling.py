"""The suite's own scheduler (tests/support/scheduling.py): a file's tests run on one worker, the browser tests all on
one; groups are estimated from their files' recorded seconds per test, unrecorded files at the median rate, and the
queue is handed out longest first."""
import os
import subprocess
import sys
from pathlib import Path

from tests.support.scheduling import (FileSecondsRecorder, estimated_seconds, file_of, group_of, recorded_seconds,
                                      seconds_per_test)

ROOT = Path(__file__).resolve().parents[1]

RECORDED = {"tests/a.py": {"seconds": 80.0, "tests": 4}, "tests/b.py": {"seconds": 3.0, "tests": 3},
            "tests/c.py": {"seconds": 10.0, "tests": 5}}


def test_a_test_runs_with_its_file_and_the_browser_tests_together():
    assert group_of("tests/models/test_a.py::test_b[x@y::z]") == "tests/models/test_a.py"
    assert group_of("tests/e2e/test_a.py::test_b") == group_of("tests/e2e/test_c.py::test_d[1]") == "browser"


def test_under_xdist_every_file_runs_whole_on_one_worker(tmp_path):
    """Two workers on three small files (a conftest of this scheduler alone, no backend): each file's tests all
    report the same worker. (pytest-xdist's own `xdist_group` marks never took under pytest 9: every test was a
    group of its own, unnoticed for a week.)"""
    (tmp_path / "conftest.py").write_text(
        "from tests.support.scheduling import LongestFirstScheduling\n"
        "def pytest_xdist_make_scheduler(config, log):\n"
        "    return LongestFirstScheduling(config, log)\n")
    ran = tmp_path / "ran.txt"
    for name in ("test_a.py", "test_b.py", "test_c.py"):
        (tmp_path / name).write_text(
            "import os, pytest\n"
            "@pytest.mark.parametrize('i', range(6))\n"
            "def test_t(i):\n"
            f"    open({str(ran)!r}, 'a').write('{name} ' + os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup",
                          "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    workers: dict[str, set[str]] = {}
    for line in ran.read_text().splitlines():
        file, worker = line.split()
        workers.setdefault(file, set()).add(worker)
    assert set(workers) == {"test_a.py", "test_b.py", "test_c.py"}
    assert all(len(ran_on) == 1 for ran_on in workers.values()), workers


def test_a_group_costs_its_tests_at_their_files_rates():
    group = ["tests/a.py::t1", "tests/a.py::t2[x@y]", "tests/b.py::t"]
    assert file_of(group[1]) == "tests/a.py"
    assert estimated_seconds(group, seconds_per_test(RECORDED)) == 20.0 + 20.0 + 1.0


def test_an_unrecorded_file_counts_at_the_median_rate():
    assert estimated_seconds(["tests/new.py::t1", "tests/new.py::t2"], seconds_per_test(RECORDED)) == 2 * 2.0
    assert estimated_seconds(["tests/new.py::t1"], seconds_per_test({})) == 1.0


def test_the_committed_table_names_existing_files_with_positive_seconds():
    from pathlib import Path

    table = recorded_seconds()
    assert len(table) > 100  # the whole suite was recorded, not a subset
    root = Path(__file__).resolve().parents[1]
    missing = [file for file in table if not (root / file).exists()]
    assert len(missing) <= 5, f"stale entries, re-record with `make test-seconds`: {missing}"
    assert all(entry["seconds"] >= 0 and entry["tests"] > 0 for entry in table.values())


def test_the_queue_is_handed_out_longest_first(monkeypatch):
    from tests.support import scheduling

    monkeypatch.setattr(scheduling, "recorded_seconds", lambda: RECORDED)
    scheduler = object.__new__(scheduling.LongestFirstScheduling)  # only the queue is needed, not a session
    scheduler.workqueue = {"tests/b.py": {"tests/b.py::t1": False},  # loadgroup's order: most tests
                           "browser": {"tests/c.py::t1": False, "tests/c.py::t2": False},
                           "tests/a.py": {"tests/a.py::t1": False}}
    scheduler._order_workqueue()
    assert list(scheduler.workqueue) == ["tests/a.py", "browser", "tests/b.py"]


def test_the_table_is_written_only_after_a_passing_run(tmp_path):
    from types import SimpleNamespace

    recorder = FileSecondsRecorder(tmp_path / "seconds.json")
    # the setup and call reports of one test add up
    for nodeid, duration in [("tests/a.py::t1", 2.0), ("tests/a.py::t1", 0.5), ("tests/b.py::t", 1.0)]:
        recorder.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=duration))
    recorder.pytest_sessionfinish(exitstatus=1)
    assert not recorder.path.exists()
    recorder.pytest_sessionfinish(exitstatus=0)
    assert recorded_seconds(recorder.path) == {"tests/a.py": {"seconds": 2.5, "tests": 1},
                                               "tests/b.py": {"seconds": 1.0, "tests": 1}}
