"""The artifact cache: every expensive result stored under (feature, action, model fingerprint,
canonical config, code version), plus one run-history row per request (cached or computed); artifacts read or
written inside a request are that run's uses, not runs (`backend.store.runlog`)."""
from __future__ import annotations

import contextvars
import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pandas as pd

from backend.progress import is_stop
from backend.store.codec import canonical_params, dumps, loads
from backend.store.db import StoreUnavailable, connect, store_path
from backend.store.origin import COMPUTED
from backend.store.runlog import DONE, STOPPED, collecting, inside_run, note_use, record_run
from backend.store.singleflight import key_lock

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
    run_id: str  # "" when the store was unavailable and nothing was recorded
    stored: bool = True

    @property
    def provenance(self) -> str:
        if not self.stored:
            return f"computed in {self.seconds:.1f} s (not cached: the store is unavailable)"
        return "cached" if self.cached else f"computed in {self.seconds:.1f} s"


class NotStored(Exception):
    """Raised by `cached` on a miss inside `stored_only()`: the caller decides whether to compute now. Carries
    the typical compute time of this feature's action on this model in this store (None: never run here)."""

    def __init__(self, feature: str, action: str, estimate_seconds: float | None, fingerprint: str = "") -> None:
        super().__init__(f"{feature} {action} is not in the store")
        self.feature, self.action, self.estimate_seconds = feature, action, estimate_seconds
        self.fingerprint = fingerprint


_STORED_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("stored_only", default=False)
_ON_WAIT: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("on_wait", default=None)


@contextmanager
def while_waiting(callback: Callable[[], None]) -> Iterator[None]:
    """Inside: `callback()` is called once when an identical request computing elsewhere (another session,
    thread or process) makes this one wait for its artifact."""
    token = _ON_WAIT.set(callback)
    try:
        yield
    finally:
        _ON_WAIT.reset(token)


@contextmanager
def stored_only() -> Iterator[None]:
    """Inside: stored results are served, and the first miss raises NotStored instead of computing."""
    token = _STORED_ONLY.set(True)
    try:
        yield
    finally:
        _STORED_ONLY.reset(token)


def typical_seconds(feature: str, action: str, fingerprint: str) -> float | None:
    """Median compute time of this action on this model over the stored artifacts (shipped reference ones
    included), or None when it never ran here."""
    with connect() as con:
        row = con.execute("SELECT median(compute_seconds) FROM artifacts WHERE feature = ? AND action = ? "
                          "AND fingerprint = ?", [feature, action, fingerprint]).fetchone()
    return None if row is None or row[0] is None else float(row[0])


def artifact_key(feature: str, action: str, fingerprint: str, params: str, code_version: str) -> str:
    text = json.dumps([feature, action, fingerprint, params, code_version])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def lookup(key: str) -> tuple[Any, float] | None:
    with connect() as con:
        row = con.execute("SELECT payload, compute_seconds FROM artifacts WHERE key = ?", [key]).fetchone()
    return None if row is None else (loads(row[0]), row[1])


def _insert(con, *, feature, action, model: ModelRef, params, key, code_version, value, seconds) -> None:
    """A computed artifact on the caller's connection (the caller records the run in the same transaction:
    never a run without its artifact)."""
    con.execute("INSERT INTO artifacts (key, feature, action, fingerprint, params, code_version, payload,"
                " compute_seconds, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                [key, feature, action, model.fingerprint, params, code_version, dumps(value), seconds, COMPUTED])


def _record(con, *, feature, action, model: ModelRef, params, key, seconds, cached, uses=(), status=DONE) -> str:
    return record_run(con, feature=feature, action=action, model_id=model.id, fingerprint=model.fingerprint,
                      params=params, key=key, seconds=seconds, cached=cached, uses=uses, status=status)


def _record_stopped(*, feature, action, model: ModelRef, params, seconds, uses) -> None:
    """A run its user stopped: a row marked stopped, no artifact (nothing partial is stored). The row keeps the
    complete inner results it used, so clean-up does not take them. Best effort: the stop is what matters."""
    try:
        with connect() as con:
            _record(con, feature=feature, action=action, model=model, params=params, key="", seconds=seconds,
                    cached=False, uses=uses, status=STOPPED)
    except StoreUnavailable:
        pass


def cached(feature: str, action: str, model: ModelRef, config: Any, compute: Callable[[], T],
           code_version: str = "1") -> Computed[T]:
    """Return the stored result for this exact request, or compute, store and return it.

    Bump `code_version` in a feature when its numbers change, so old artifacts are not served.
    """
    params = canonical_params(config)
    key = artifact_key(feature, action, model.fingerprint, params, code_version)
    try:
        return _cached(feature, action, model, params, key, compute, code_version)
    except StoreUnavailable:  # read-only, locked for too long or damaged: still answer, uncached
        if _STORED_ONLY.get():
            raise NotStored(feature, action, None, model.fingerprint) from None
        start = time.perf_counter()
        value = compute()
        return Computed(value=value, cached=False, seconds=time.perf_counter() - start, key=key, run_id="",
                        stored=False)


def _cached(feature: str, action: str, model: ModelRef, params: str, key: str, compute: Callable[[], T],
            code_version: str) -> Computed[T]:
    served = _serve_hit(feature, action, model, params, key)
    if served is not None:
        return served
    if _STORED_ONLY.get():
        raise NotStored(feature, action, typical_seconds(feature, action, model.fingerprint), model.fingerprint)
    # Identical requests running now (other threads or processes) wait here for the first one's artifact.
    with key_lock(store_path(), key, on_wait=_ON_WAIT.get()):
        served = _serve_hit(feature, action, model, params, key)
        if served is not None:
            return served
        nested = inside_run()
        with collecting() as uses:
            start = time.perf_counter()
            try:
                value = compute()
            except BaseException as err:
                if is_stop(err) and not nested:
                    _record_stopped(feature=feature, action=action, model=model, params=params,
                                    seconds=time.perf_counter() - start, uses=set(uses))
                raise
            seconds = time.perf_counter() - start
        try:
            with connect() as con:
                _insert(con, feature=feature, action=action, model=model, params=params, key=key,
                        code_version=code_version, value=value, seconds=seconds)
                run_id = "" if nested else _record(con, feature=feature, action=action, model=model, params=params,
                                                    key=key, seconds=seconds, cached=False, uses=uses)
        except StoreUnavailable:  # a full disk at the save: the result computed is still the answer, not cached
            return Computed(value=value, cached=False, seconds=seconds, key=key, run_id="", stored=False)
    note_use(key)  # nested: the outer run uses it
    return Computed(value=value, cached=False, seconds=seconds, key=key, run_id=run_id)


def _serve_hit(feature: str, action: str, model: ModelRef, params: str, key: str) -> Computed | None:
    """The stored result with a 'cached' run row (none when nested in another computation), or None on a miss."""
    hit = lookup(key)
    if hit is None:
        return None
    value, seconds = hit
    if inside_run():
        note_use(key)
        return Computed(value=value, cached=True, seconds=seconds, key=key, run_id="")
    with connect() as con:
        run_id = _record(con, feature=feature, action=action, model=model, params=params, key=key,
                         seconds=seconds, cached=True)
    return Computed(value=value, cached=True, seconds=seconds, key=key, run_id=run_id)


# Many small artifacts at once (e.g. one per document): one store open per slice instead of one per item,
# which on a busy machine costs more than computing a small item.

def lookup_many(feature: str, action: str, model: ModelRef, configs: Sequence[Any],
                code_version: str = "1") -> dict[int, Any]:
    """Stored results for several requests in one read, keyed by position in `configs`; misses are absent.
    A hit records no run row; inside a computation it counts as that run's use."""
    positions: dict[str, list[int]] = {}
    for i, config in enumerate(configs):
        key = artifact_key(feature, action, model.fingerprint, canonical_params(config), code_version)
        positions.setdefault(key, []).append(i)
    if not positions:
        return {}
    with connect() as con:
        rows = con.execute("SELECT key, payload FROM artifacts WHERE key IN (SELECT unnest(?))",
                           [list(positions)]).fetchall()
    note_use(*(key for key, _ in rows))
    return {i: loads(payload) for key, payload in rows for i in positions[key]}


def stored_keys(keys: Sequence[str]) -> set[str]:
    """Which of these artifact keys the store holds (one read of the keys; no payload decoded, no run recorded)."""
    if not keys:
        return set()
    with connect() as con:
        rows = con.execute("SELECT key FROM artifacts WHERE key IN (SELECT unnest(?))", [list(keys)]).fetchall()
    return {key for (key,) in rows}


def store_many(feature: str, action: str, model: ModelRef, items: Sequence[tuple[Any, Any]],
               seconds_each: float, code_version: str = "1") -> None:
    """Store several computed (config, value) results in one transaction. They are parts of a computation, not
    runs: inside one they count as its uses; outside, no run refers to them (so no run's deletion removes them).
    One INSERT of a table of rows: a statement per row took ~10 ms each, as long as computing a small item."""
    rows: dict[str, list] = {}
    for config, value in items:
        params = canonical_params(config)
        key = artifact_key(feature, action, model.fingerprint, params, code_version)
        rows.setdefault(key, [key, feature, action, model.fingerprint, params, code_version, dumps(value),
                              seconds_each, COMPUTED])
    if not rows:
        return
    incoming = pd.DataFrame(list(rows.values()), columns=list(_COLUMNS))
    columns = ", ".join(_COLUMNS)
    with connect() as con:
        con.register("incoming_artifacts", incoming)
        try:
            con.execute(f"INSERT INTO artifacts ({columns}) SELECT {columns} FROM incoming_artifacts "
                        "ON CONFLICT (key) DO NOTHING")
        finally:
            con.unregister("incoming_artifacts")
    note_use(*rows)


_COLUMNS = ("key", "feature", "action", "fingerprint", "params", "code_version", "payload", "compute_seconds", "origin")


@dataclass(frozen=True)
class ComputedMany(Generic[T]):
    """Results in request order; hits: requests found in the store; computed: distinct requests computed."""

    values: list[T]
    hits: int
    computed: int


def _typical_or_none(feature: str, action: str, fingerprint: str) -> float | None:
    try:
        return typical_seconds(feature, action, fingerprint)
    except StoreUnavailable:
        return None


def cached_many(feature: str, action: str, model: ModelRef, configs: Sequence[Any],
                compute: Callable[[list[Any]], Sequence[T]], code_version: str = "1") -> ComputedMany[T]:
    """`cached` for a slice of small requests (hashable configs): one read for all of them; the missing
    ones, each distinct config once, go to a single `compute(missing)` call (so it can batch) and are
    stored in one transaction."""
    try:
        found = lookup_many(feature, action, model, configs, code_version)
    except StoreUnavailable:
        found = {}
    hits = len(found)
    missing = list(dict.fromkeys(c for i, c in enumerate(configs) if i not in found))
    if missing and _STORED_ONLY.get():  # the same rule as `cached`: a miss is the caller's to decide on
        each = _typical_or_none(feature, action, model.fingerprint)
        raise NotStored(feature, action, None if each is None else each * len(missing), model.fingerprint)
    if missing:
        start = time.perf_counter()
        values = list(compute(missing))
        try:
            store_many(feature, action, model, list(zip(missing, values)),
                       (time.perf_counter() - start) / len(missing), code_version)
        except StoreUnavailable:
            pass  # computed, not cached; store_notice() says why on every page
        fresh = dict(zip(missing, values))
        found.update({i: fresh[c] for i, c in enumerate(configs) if i not in found})
    return ComputedMany(values=[found[i] for i in range(len(configs))], hits=hits, computed=len(missing))


@dataclass(frozen=True)
class Stored:
    """A stored result found without its exact request: the canonical params it was computed with."""

    params: dict
    value: Any
    compute_seconds: float


def latest(feature: str, action: str, model: ModelRef, code_version: str = "1") -> Stored | None:
    """The most recent stored result of (feature, action) for this model, any configuration; computes nothing
    (pages show it before the user asks for a long run)."""
    try:
        with connect() as con:
            row = con.execute("SELECT params, payload, compute_seconds FROM artifacts WHERE feature = ? AND action = ?"
                              " AND fingerprint = ? AND code_version = ? ORDER BY created DESC LIMIT 1",
                              [feature, action, model.fingerprint, code_version]).fetchone()
    except StoreUnavailable:
        return None
    return None if row is None else Stored(params=json.loads(row[0]), value=loads(row[1]), compute_seconds=row[2])
