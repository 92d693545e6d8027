"""A first view's clicks on a fresh install: the shipped reference set imported into an empty store, each click's
request (keyed exactly as the page asks) must be a store hit, with nothing computed (stored-only: a miss raises)."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from backend.store import stored_only
from backend.store.reference import import_reference
from backend.store.runs import list_runs


def served_from_the_store(store: Path, verb, subject: Any, configs: Sequence[Any]) -> list[Any]:
    """Each config's result, every one read from the shipped rows (`store`: an empty store of the test's own)."""
    import_reference(store=store)
    values = []
    with stored_only():  # a request the reference set lacks raises NotStored instead of computing
        for config in configs:
            computed = verb(subject, config)
            assert computed.cached, f"{verb.qualified} {config} was computed"
            values.append(computed.value)
    runs = list_runs()
    clicks = runs[(runs["feature"] == verb.feature) & (runs["action"] == verb.name)]
    assert len(clicks) == len(configs) and clicks["cached"].all(), "every click is recorded as a cached run"
    return values
