"""A store as a shared server has it: the shipped reference set, another session's results, this session's runs.

Shared by the clean-up tests of the backend, the CLI and the Runs page, so all three delete from the same scene.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from backend.store import ModelRef, cached, status
from backend.store.artifacts import cached_many
from backend.store.db import connect
from backend.store.reference import import_reference, read_reference, reference_dir
from backend.store.scope import current_scope, set_scope

THEIRS = "another-session"
MODEL = ModelRef("tiny-llama", "lifecycle")


@dataclass(frozen=True)
class Config:
    n: int


@dataclass(frozen=True)
class Scene:
    """mine: this session's run that computed its own artifact `mine_key` (the one to delete); shared: this
    session's cache hit on the other session's result; on_reference: this session's hits on shipped artifacts;
    theirs: the other session's runs."""

    mine: str
    mine_key: str
    shared: str
    on_reference: tuple[str, ...]
    theirs: tuple[str, ...]


def in_scope(scope: str, call):
    before = current_scope()
    set_scope(scope)
    try:
        return call()
    finally:
        set_scope(before)


def nag_style(n_docs: int, start: int = 0):
    """One computation reading and writing many small artifacts, as NAG's ranking does with document features."""
    def compute():
        docs = cached_many("lifecycle", "doc", MODEL, [Config(i) for i in range(start, start + n_docs)],
                           lambda missing: [{"doc": c.n} for c in missing])
        return {"ranked": len(docs.values)}

    return cached("lifecycle", "rank", MODEL, Config(n_docs * 1000 + start), compute)


def reference_hits(count: int) -> tuple[str, ...]:
    """Runs served from shipped reference artifacts (requested exactly as the pages request them)."""
    rows = [row for path in sorted(reference_dir().glob("*.jsonl.gz")) for row in read_reference(path)][:count]

    def refuse():
        raise AssertionError("a shipped artifact was computed again")

    return tuple(cached(row["feature"], row["action"], ModelRef("embedded", row["fingerprint"]),
                        json.loads(row["params"]), refuse, row["code_version"]).run_id for row in rows)


def build(scope: str) -> Scene:
    """Populate the current store (DASH_STORE) and return which run is which; `scope` is this session's."""
    import_reference()  # the shipped set, through the project's own import (a no-op where it is in already)
    theirs = in_scope(THEIRS, lambda: (cached("lifecycle", "run", MODEL, Config(1), lambda: {"theirs": 1}).run_id,
                                       nag_style(5).run_id))
    mine = in_scope(scope, lambda: cached("lifecycle", "run", MODEL, Config(2), lambda: {"mine": 2}))
    shared = in_scope(scope, lambda: cached("lifecycle", "run", MODEL, Config(1), lambda: {"never": 0}).run_id)
    on_reference = in_scope(scope, lambda: reference_hits(3))
    return Scene(mine.run_id, mine.key, shared, on_reference, theirs)


def keys_by_origin() -> dict[str, set[str]]:
    with connect() as con:
        rows = con.execute("SELECT origin, key FROM artifacts").fetchall()
    found: dict[str, set[str]] = {}
    for origin, key in rows:
        found.setdefault(origin, set()).add(key)
    return found


def counts() -> dict[str, int]:
    return dict(status().by_origin)
