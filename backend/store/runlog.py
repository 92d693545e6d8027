"""Run rows: one per computation someone asked for, whatever number of artifacts it reads or writes.

The outermost `cached` call is the run. Artifacts read or written inside it (a nested `cached`, a `cached_many`
slice such as NAG's per-document features) are recorded as that run's uses in `run_artifacts`, not as runs of
their own, so one NAG computation is one row in the Runs list and clean-up still knows which artifacts it needs.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import duckdb

from backend.store.db import connect
from backend.store.scope import current_scope

DONE, STOPPED = "done", "stopped"  # runs.status: a stopped run stored no result of its own

_USES: ContextVar[set[str] | None] = ContextVar("run_uses", default=None)


def inside_run() -> bool:
    """True while an outer computation is running in this context (its inner artifacts record no run)."""
    return _USES.get() is not None


@contextmanager
def collecting() -> Iterator[set[str]]:
    """The set collecting the keys this computation uses: a new one for the outermost, the outer's when nested."""
    uses = _USES.get()
    if uses is not None:
        yield uses
        return
    uses = set()
    token = _USES.set(uses)
    try:
        yield uses
    finally:
        _USES.reset(token)


def note_use(*keys: str) -> None:
    """Count these artifacts as used by the run in progress (nothing outside a run)."""
    uses = _USES.get()
    if uses is not None:
        uses.update(keys)


def record_run(con: duckdb.DuckDBPyConnection, *, feature: str, action: str, model_id: str, fingerprint: str,
               params: str, key: str, seconds: float, cached: bool, uses: Iterable[str] = (),
               status: str = DONE) -> str:
    """One run row (and its uses) on the caller's connection; returns the new run id."""
    run_id = uuid.uuid4().hex[:12]
    con.execute("INSERT INTO runs (run_id, feature, action, model_id, fingerprint, params, artifact_key, seconds,"
                " cached, session, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run_id, feature, action, model_id, fingerprint, params, key, seconds, cached, current_scope(),
                 status])
    inner = sorted(set(uses) - {key})
    if inner:
        con.execute("INSERT INTO run_artifacts SELECT ?, unnest(?) ON CONFLICT DO NOTHING", [run_id, inner])
    return run_id


def record_lone_run(**fields) -> str:
    """`record_run` in a transaction of its own, for a run that stores no artifact (a keyed detection, its refusal)."""
    with connect() as con:
        return record_run(con, **fields)
