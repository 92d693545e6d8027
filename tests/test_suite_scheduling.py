"""The suite's own scheduler (tests/support/scheduling.py): groups are estimated from their files' recorded
seconds per test, unrecorded files at the median rate, and the queue is handed out longest first."""
from tests.support.scheduling import FileSecondsRecorder, estimated_seconds, file_of, recorded_seconds, seconds_per_test

RECORDED = {"tests/a.py": {"seconds": 80.0, "tests": 4}, "tests/b.py": {"seconds": 3.0, "tests": 3},
            "tests/c.py": {"seconds": 10.0, "tests": 5}}


def test_a_group_costs_its_tests_at_their_files_rates():
    group = ["tests/a.py::t1@browser", "tests/a.py::t2[x@y]@browser", "tests/b.py::t@browser"]
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
    scheduler.workqueue = {"tests/b.py": {"tests/b.py::t1@tests/b.py": False},  # loadgroup's order: most tests
                           "browser": {"tests/c.py::t1@browser": False, "tests/c.py::t2@browser": False},
                           "tests/a.py": {"tests/a.py::t1@tests/a.py": False}}
    scheduler._order_workqueue()
    assert list(scheduler.workqueue) == ["tests/a.py", "browser", "tests/b.py"]


def test_the_table_is_written_only_after_a_passing_run(tmp_path):
    from types import SimpleNamespace

    recorder = FileSecondsRecorder(tmp_path / "seconds.json")
    for nodeid, duration in [("tests/a.py::t1@tests/a.py", 2.0), ("tests/a.py::t1@tests/a.py", 0.5),
                             ("tests/b.py::t@browser", 1.0)]:  # setup and call reports of one test add up
        recorder.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=duration))
    recorder.pytest_sessionfinish(exitstatus=1)
    assert not recorder.path.exists()
    recorder.pytest_sessionfinish(exitstatus=0)
    assert recorded_seconds(recorder.path) == {"tests/a.py": {"seconds": 2.5, "tests": 1},
                                               "tests/b.py": {"seconds": 1.0, "tests": 1}}
