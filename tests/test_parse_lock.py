"""backend/parse_lock.py: once the backend's verbs are imported, every ast.parse in the process takes one lock."""
import ast
import threading

import backend.verbs  # noqa: F401 - installs the lock
from backend import parse_lock


def test_a_parse_waits_while_another_thread_parses():
    done = threading.Event()
    worker = threading.Thread(target=lambda: (ast.parse("x = 1"), done.set()), daemon=True)
    with parse_lock._LOCK:  # as a parse in this thread would hold it
        worker.start()
        assert not done.wait(0.2), "a parse ran beside another"
    assert done.wait(30)
