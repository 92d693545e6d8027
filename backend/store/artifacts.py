"""The artifact cache: every expensive result stored under (feature, action, model fingerprint,
canonical config, code version), plus one run-history row per request (cached or computed)."""
from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from backend.store import codec
from backend.store.db import connect

T = TypeVar("T")


@dataclass(frozen=True)
class ModelRef:
    """What a cache key needs to know about a model: its id (for humans) and fingerprint (for the key)."""

    id: str
    fingerprint: str

    @classmethod
    def of(cls, handle) -> ModelRef:
        """From a loaded `backend.models.ModelHandle` (or anything with .id and .fingerprint)."""
        return cls(handle.id, handle.fingerprint)


@dataclass(frozen=True)
class Computed(Generic[T]):
    """A result and where it came from. `seconds` is the original compute time, also on a cache hit."""

    value: T
    cached: bool
    seconds: float
    key: str
    run_id: str

    @property
    def provenance(self) -> str:
        return "cached" if self.cached else f"computed in {self.seconds:.1f} s"


def artifact_key(feature: str, action: str, fingerprint: str, params: str, code_version: str) -> str:
    text = json.dumps([feature, action, fingerprint, params, code_version])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def lookup(key: str) -> tuple[Any, float] | None:
    with connect() as con:
        row = con.execute("SELECT payload, compute_seconds FROM artifacts WHERE key = ?", [key]).fetchone()
    return None if row is None else (codec.loads(row[0]), row[1])


def _record(con, *, run_id, feature, action, model: ModelRef, params, key, seconds, cached) -> None:
    con.execute("INSERT INTO runs (run_id, feature, action, model_id, fingerprint, params, artifact_key, seconds, cached)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run_id, feature, action, model.id, model.fingerprint, params, key, seconds, cached])


def cached(feature: str, action: str, model: ModelRef, config: Any, compute: Callable[[], T],
           code_version: str = "1") -> Computed[T]:
    """Return the stored result for this exact request, or compute, store and return it.

    Bump `code_version` in a feature when its numbers change, so old artifacts are not served.
    """
    params = codec.canonical_params(config)
    key = artifact_key(feature, action, model.fingerprint, params, code_version)
    run_id = uuid.uuid4().hex[:12]
    hit = lookup(key)
    if hit is not None:
        value, seconds = hit
        with connect() as con:
            _record(con, run_id=run_id, feature=feature, action=action, model=model, params=params, key=key,
                    seconds=seconds, cached=True)
        return Computed(value, True, seconds, key, run_id)
    start = time.perf_counter()
    value = compute()
    seconds = time.perf_counter() - start
    payload = codec.dumps(value)
    with connect() as con:  # artifact and run row in one transaction: never a run without its artifact
        con.execute("INSERT INTO artifacts (key, feature, action, fingerprint, params, code_version, payload,"
                    " compute_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                    [key, feature, action, model.fingerprint, params, code_version, payload, seconds])
        _record(con, run_id=run_id, feature=feature, action=action, model=model, params=params, key=key,
                seconds=seconds, cached=False)
    return Computed(value, False, seconds, key, run_id)


@dataclass(frozen=True)
class StoreStatus:
    path: str
    size_bytes: int
    artifacts: int
    runs: int


def status() -> StoreStatus:
    from backend.store.db import store_path

    with connect() as con:
        artifacts = con.execute("SELECT count(*) FROM artifacts").fetchone()[0]
        runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    path = store_path()
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    return StoreStatus(str(path), size, artifacts, runs)
