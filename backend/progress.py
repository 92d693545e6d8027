"""The progress callback long computations accept: `progress(fraction in [0, 1], message)`."""
from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[float, str], None]


def silent(fraction: float, message: str) -> None:
    """The default when nobody is watching."""


def scaled(progress: Progress, start: float, end: float) -> Progress:
    """A sub-task's progress mapped into [start, end] of its parent's."""
    return lambda fraction, message: progress(start + (end - start) * fraction, message)
