"""Tests wait on events, not clocks (issue 56 §6): a fixed sleep is too short on a loaded machine and too long on
an idle one. A test waits with tests.support.waiting.wait_until, threading.Event, a process's own wait or
Playwright's waits; the only sleep is wait_until's poll interval."""
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SLEEP = re.compile(r"\bsleep\(")
ALLOWED = {"support/waiting.py"}  # wait_until's poll interval: the wait ends when the condition holds


def test_no_test_sleeps_on_a_clock():
    found = [f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
             for path in sorted(TESTS.rglob("*.py")) if path.relative_to(TESTS).as_posix() not in ALLOWED
             for number, line in enumerate(path.read_text().splitlines(), 1) if SLEEP.search(line)]
    assert not found, "wait for the event instead (tests/support/waiting.py):\n" + "\n".join(found)
