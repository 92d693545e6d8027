"""Waiting on an event, not a clock: `wait_until(condition, timeout_s, what)` returns as soon as the condition
holds and fails with what it waited for once the deadline passes. The deadline is generous on purpose: it only
keeps a regression from hanging the suite, and a loaded machine only makes the wait longer, never the test fail.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL_S = 0.01  # how often the condition is asked; not a duration anything waits for


def wait_until(condition: Callable[[], T], timeout_s: float, what: str) -> T:
    """The condition's first truthy value; AssertionError naming `what` if none came within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(POLL_S)  # the one poll interval of the tests: the wait ends when the condition holds
