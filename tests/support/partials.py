"""A progress that watches partial results (backend.progress), as a page's status box does, and keeps them."""
from __future__ import annotations

from backend.progress import Partial


class PartialsSeen:
    """Every fraction reported to it kept in `fractions`, every partial in `partials`, in order."""

    watches_partials = True

    def __init__(self) -> None:
        self.fractions: list[float] = []
        self.partials: list[Partial] = []

    def __call__(self, fraction: float, message: str) -> None:
        self.fractions.append(fraction)

    def partial(self, partial: Partial) -> None:
        self.partials.append(partial)

    def done(self) -> list[int]:
        return [p.done for p in self.partials]
