"""Drill-downs prepared right after a map is drawn: every object the map shows gets its drill-down computed in one
pass and stored, so a click on any of them is a store read (Inspect's heads and states, FP8's heads).

It runs after the map and after the drill-down already open, in the status box every page computation uses (progress,
Stop): a click made while it runs opens its object as before, and the preparation starts again after it. A shipped
first view carries its drill-downs (data/reference/*_drilldowns.jsonl.gz) and a map prepared once has them stored:
then the store is read once and nothing is drawn."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.ui.run import NOW, run_verb
from backend.progress import Progress
from backend.store.db import StoreUnavailable

LABEL = "Preparing the drill-downs of every object on the map"


def prepare_drilldowns(stored: Callable[[], bool], store: Callable[[Progress], Any], label: str = LABEL) -> None:
    """`store(progress)` computes and stores the drill-downs the store lacks: run it in a status box unless
    `stored()` says the store has them all (a read of their keys). A store that cannot be read is left alone: what
    would be computed could not be kept for the next click."""
    try:
        if stored():
            return
    except StoreUnavailable:
        return
    run_verb(store, label=label, when=NOW)
