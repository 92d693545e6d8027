"""A long computation runs at a lower CPU priority than the server's other threads, and gives it back after."""
import os
import sys
import threading

import pytest

from app.ui.priority import background_priority


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _in_a_thread(body) -> dict:
    """Run `body(seen)` in a thread of its own (as Streamlit runs a script), so the test process keeps its value."""
    seen: dict = {}
    thread = threading.Thread(target=body, args=(seen,))
    thread.start()
    thread.join()
    return seen


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_only_the_computing_thread_steps_back_and_it_is_restored():
    server_thread = _nice()

    def script_run(seen):
        seen["before"] = _nice()
        with background_priority(5):
            seen["inside"] = _nice()
            seen["server"] = os.getpriority(os.PRIO_PROCESS, threading.main_thread().native_id)
            seen["torch-like worker"] = _in_a_thread(lambda s: s.setdefault("value", _nice()))["value"]
        seen["after"] = _nice()

    seen = _in_a_thread(script_run)
    assert seen["inside"] == min(19, seen["before"] + 5)
    assert seen["torch-like worker"] == seen["inside"]  # threads it starts inherit the lower priority
    assert seen["server"] == server_thread  # the rest of the server keeps its priority
    if os.geteuid() == 0:  # an unprivileged process cannot lower its nice value again
        assert seen["after"] == seen["before"]


def test_a_step_of_zero_changes_nothing():
    def script_run(seen):
        seen["before"] = _nice()
        with background_priority(0):
            seen["inside"] = _nice()

    seen = _in_a_thread(script_run)
    assert seen["inside"] == seen["before"]
