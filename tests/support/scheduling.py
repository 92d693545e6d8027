"""Which tests run together on one of `make test`'s xdist workers, and the order in which the workers take them:
longest group first.

A group is a test file, or all the browser tests (one app server and one Chromium for them all). pytest-xdist's
`--dist loadgroup` would read groups from `xdist_group` marks, which its worker hook writes into each node id as an
`@group` suffix; pytest 9 builds node ids from `Node._id` and ignores that write, so every test was a group of its own:
files, the browser tests and the Ray module were split over both workers, each starting its own app server, Chromium
and local Ray. The groups are named here instead, from the node ids (`group_of`).

pytest-xdist's `--dist loadgroup` hands out groups largest test count first. Test count is a poor proxy for time
here: the load test is one test of 75 s and the Ray file four tests of 80 s, so they were handed out last and one
worker ran them while the other sat idle.
This scheduler hands out the groups by their recorded seconds instead, longest first (the classic
longest-processing-time rule, within 4/3 of the best possible finish on two workers), so the run ends with
short groups on both workers.

The seconds come from tests/support/file_seconds.json, each test file's seconds and test count, written by a
passing run with DASH_RECORD_TEST_SECONDS=1 (`make test-seconds`). A test in a file missing from it (a new file)
counts at the median seconds per test of the recorded files: a stale table only costs balance, never a test.
"""
from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from xdist.scheduler import LoadGroupScheduling

SECONDS_FILE = Path(__file__).with_name("file_seconds.json")


def recorded_seconds(path: Path = SECONDS_FILE) -> dict[str, dict[str, float]]:
    """{test file: {"seconds": s, "tests": n}} from the last recording ({} when there is none or it is unreadable)."""
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def seconds_per_test(recorded: dict[str, dict[str, float]]) -> Callable[[str], float]:
    """A test file's recorded seconds per test; a file not on record (a new one) at the median of the others."""
    rates = {file: entry["seconds"] / entry["tests"] for file, entry in recorded.items() if entry.get("tests")}
    median_rate = statistics.median(rates.values()) if rates else 1.0
    return lambda file: rates.get(file, median_rate)


def estimated_seconds(group_nodeids: Iterable[str], rate: Callable[[str], float]) -> float:
    """A group's expected seconds: each of its tests at its file's rate. Files are the recorded unit, as a group
    may gather several (the browser tests)."""
    return sum(rate(file_of(nodeid)) for nodeid in group_nodeids)


BROWSER_TESTS = "tests/e2e/"


def group_of(nodeid: str) -> str:
    """The group a test runs in: the browser tests together, every other test with its file (node ids as `make test`
    names them, from the repository root)."""
    file = file_of(nodeid)
    return "browser" if file.startswith(BROWSER_TESTS) else file


class LongestFirstScheduling(LoadGroupScheduling):
    """`--dist loadgroup` with this module's groups, the work queue ordered by estimated seconds instead of by test
    count."""

    _ordered = False

    def _split_scope(self, nodeid: str) -> str:
        return group_of(nodeid)

    def _assign_work_unit(self, node) -> None:
        # The parent builds the whole queue, then assigns the first units: order it just before the first one.
        if not self._ordered:
            self._order_workqueue()
            self._ordered = True
        super()._assign_work_unit(node)

    def _order_workqueue(self) -> None:
        rate = seconds_per_test(recorded_seconds())
        seconds = {scope: estimated_seconds(nodeids, rate) for scope, nodeids in self.workqueue.items()}
        ordered = sorted(self.workqueue.items(), key=lambda item: -seconds[item[0]])
        self.workqueue.clear()
        self.workqueue.update(ordered)


class FileSecondsRecorder:
    """Adds up each test file's setup, call and teardown seconds as the controller receives the reports, and
    writes the table when the whole run passed (a failed or interrupted run would record a distorted one)."""

    def __init__(self, path: Path = SECONDS_FILE) -> None:
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)
        self.tests: dict[str, set[str]] = defaultdict(set)

    def pytest_runtest_logreport(self, report) -> None:
        file = file_of(report.nodeid)
        self.seconds[file] += report.duration
        self.tests[file].add(report.nodeid)

    def pytest_sessionfinish(self, exitstatus) -> None:
        if exitstatus != 0:
            return
        table = {file: {"seconds": round(self.seconds[file], 2), "tests": len(self.tests[file])}
                 for file in sorted(self.seconds, key=lambda f: -self.seconds[f])}
        self.path.write_text(json.dumps(table, indent=1) + "\n")


def file_of(nodeid: str) -> str:
    """The test file of a node id (`tests/x/test_y.py::test_z[param]` → `tests/x/test_y.py`)."""
    return nodeid.split("::", 1)[0]
