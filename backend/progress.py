"""The progress callback long computations accept: `progress(fraction in [0, 1], message)`."""
from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[float, str], None]


class Stopped(Exception):
    """The user stopped this computation (a Stop button, a closed tab): raised from a progress callback."""


def is_stop(err: BaseException) -> bool:
    """A stop rather than a failure: `Stopped`, Ctrl-C, or the UI framework ending a script run (Streamlit's
    rerun/stop requests are BaseExceptions, as are KeyboardInterrupt and SystemExit)."""
    return isinstance(err, Stopped) or not isinstance(err, Exception)


def silent(fraction: float, message: str) -> None:
    """The default when nobody is watching."""


def scaled(progress: Progress, start: float, end: float) -> Progress:
    """A sub-task's progress mapped into [start, end] of its parent's."""
    return lambda fraction, message: progress(start + (end - start) * fraction, message)
