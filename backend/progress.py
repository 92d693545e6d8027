"""The progress callback long computations accept: `progress(fraction in [0, 1], message)`.

A watcher that also shows partial results (a page's status box) has a `partial(Partial)` method and
`watches_partials = True`; a computation hands it what it has so far with `report_partial`, and a plain callable
(`silent`, a CLI's printer) ignores it. `scaled` (a sub-task's share of its parent's bar) passes partials through;
`SubProgress(..., convert=)` turns a sub-task's partial into its parent's (or drops it: `convert=unshown`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Progress = Callable[[float, str], None]
T = TypeVar("T")


class Stopped(Exception):
    """The user stopped this computation (a Stop button, a closed tab): raised from a progress callback."""


def is_stop(err: BaseException) -> bool:
    """A stop rather than a failure: `Stopped`, Ctrl-C, or the UI framework ending a script run (Streamlit's
    rerun/stop requests are BaseExceptions, as are KeyboardInterrupt and SystemExit)."""
    return isinstance(err, Stopped) or not isinstance(err, Exception)


def silent(fraction: float, message: str) -> None:
    """The default when nobody is watching."""


@dataclass(frozen=True)
class Partial(Generic[T]):
    """What a computation has so far: `value` (the result's own type, built from the `done` of `total` `unit`
    finished), never stored as a result."""

    value: T
    done: int
    total: int
    unit: str  # what `done` counts, plural ("problems", "conditions", "documents")

    def line(self) -> str:
        return f"{self.done} of {self.total} {self.unit}"


def wants_partials(progress: Progress) -> bool:
    """Whether anyone shows this progress's partial results (build a costly partial only then)."""
    return bool(getattr(progress, "watches_partials", False))


def report_partial(progress: Progress, partial: Partial) -> None:
    """Hand `partial` to whoever watches `progress`; nothing when nobody does."""
    if wants_partials(progress):
        progress.partial(partial)  # type: ignore[attr-defined]


def unchanged(partial: Partial) -> Partial | None:
    return partial


def unshown(partial: Partial) -> Partial | None:
    """For a sub-task whose partials mean nothing to its parent's watcher (another result type)."""
    return None


@dataclass(frozen=True)
class SubProgress:
    """A sub-task's progress: its fraction mapped into [start, end] of its parent's, its partials handed up through
    `convert` (None from it: not handed up). `convert` runs only when the parent's partials are watched."""

    parent: Progress
    start: float = 0.0
    end: float = 1.0
    convert: Callable[[Partial], Partial | None] = unchanged

    def __call__(self, fraction: float, message: str) -> None:
        self.parent(self.start + (self.end - self.start) * fraction, message)

    @property
    def watches_partials(self) -> bool:
        return wants_partials(self.parent)

    def partial(self, partial: Partial) -> None:
        converted = self.convert(partial) if self.watches_partials else None
        if converted is not None:
            report_partial(self.parent, converted)


def scaled(progress: Progress, start: float, end: float) -> Progress:
    """A sub-task's progress mapped into [start, end] of its parent's (its partials passed through)."""
    return SubProgress(progress, start, end)
