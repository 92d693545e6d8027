"""Long computations yield the CPU to other sessions' page runs.

Streamlit runs each session's script in a thread of its own, and a long computation (a sweep, a watermark
generation) runs in that thread. On a shared server with few cores, a computation at the same priority as the
other sessions' script runs makes every page of every user wait for its share of the CPU. Linux keeps a nice value
per thread, so the computing thread (and the torch worker threads it starts, which inherit it) can step back while
the rest of the server keeps its priority: the computation still gets every cycle nobody else wants.
"""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

BACKGROUND_NICE_STEP = 10  # CFS weight 1024 -> 110: an interactive rerun gets ~90% of a core it contends for


@contextmanager
def background_priority(step: int = BACKGROUND_NICE_STEP) -> Iterator[None]:
    """Run the body with this thread's nice value raised by `step` (Linux; elsewhere a no-op), then restore it
    where the OS allows (an unprivileged server cannot lower it again; the thread ends with its script run)."""
    if not sys.platform.startswith("linux") or step <= 0:
        yield
        return
    thread = threading.get_native_id()
    try:
        before = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, before + step))
    except OSError:
        yield
        return
    try:
        yield
    finally:
        try:
            os.setpriority(os.PRIO_PROCESS, thread, before)
        except OSError:
            pass
