"""One re-entrant lock per model instance.

Hooks are installed on modules shared by every browser session of the app: without a lock, one
session's head ablation would leak into another session's plain forward running at the same time.
Every hooked computation and every decoding step holds the model's lock.

The lock also says whether the model is in use: the residency LRU (backend/models/residency.py) never
evicts a model whose lock is held.
"""
from __future__ import annotations

import threading
import weakref

from torch import nn


class ModelLock:
    """A re-entrant lock that knows whether anyone holds it (`held`) and whether the calling thread does
    (`held_here`: what a forward checks, tests/test_every_verb.py)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0  # changed only by the holder, so no lock of its own
        self._owner: int | None = None  # the holder's thread id, likewise

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._lock.acquire(blocking, timeout)
        if got:
            self._depth += 1
            self._owner = threading.get_ident()
        return got

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._owner = None
        self._lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    @property
    def held(self) -> bool:
        return self._depth > 0

    @property
    def held_here(self) -> bool:
        return self._owner == threading.get_ident()


_locks: "weakref.WeakKeyDictionary[nn.Module, ModelLock]" = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def model_lock(model: nn.Module) -> ModelLock:
    with _guard:
        lock = _locks.get(model)
        if lock is None:
            lock = _locks[model] = ModelLock()
        return lock


def in_use(model: nn.Module) -> bool:
    """Whether a computation holds the model's lock right now."""
    with _guard:
        lock = _locks.get(model)
    return lock is not None and lock.held
