"""Which loaded models stay in memory: an LRU under a byte budget (DASH_MODEL_MEMORY_MB).

Before a model is loaded, the least recently used resident models that no computation is using (their model
lock is free, backend/models/locks.py) are evicted until the new one fits. A model in use is never evicted;
if the idle ones cannot make room, the load is refused with a message naming the budget. A page that needs
an evicted model loads it again, and the handle says it was reloaded.

An evicted model still referenced by a running computation (which let go of its lock between steps) is still
in memory: it keeps counting against the budget until the computation drops it, and asking for it again
returns that same object (no second copy) instead of reading the weights from disk.

Its bookkeeping has a lock of its own, so reading it (the sidebar's "in memory", a page's already resident
model) never waits for a load in progress; loads themselves are serialised by backend/models/loading.py.
"""
from __future__ import annotations

import gc
import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from torch import nn

from backend.errors import UserError

H = TypeVar("H")


def model_bytes(model: nn.Module) -> int:
    """Bytes of the model's parameters and buffers, each storage once (tied embeddings share one)."""
    seen, total = set(), 0
    for tensor in itertools.chain(model.parameters(), model.buffers()):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            total += storage.nbytes()
    return total


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MB" if n < 10 * 2**20 else f"{n / 2**20:,.0f} MB"


class Residency(Generic[H]):
    """Resident handles by id, least recently used first, with their sizes in bytes."""

    def __init__(self, model_of: Callable[[H], nn.Module], in_use: Callable[[nn.Module], bool]) -> None:
        self._resident: OrderedDict[str, tuple[H, int]] = OrderedDict()
        # id -> (the evicted handle, its model, bytes): weak, alive while a computation holds them
        self._evicted: dict[str, tuple[weakref.ref, weakref.ref, int]] = {}
        self._model_of = model_of
        self._in_use = in_use
        self._books = threading.RLock()

    def get(self, model_id: str) -> H | None:
        """The resident handle (now the most recently used), or None."""
        with self._books:
            entry = self._resident.get(model_id)
            if entry is None:
                return None
            self._resident.move_to_end(model_id)
            return entry[0]

    def still_alive(self, model_id: str) -> H | None:
        """An evicted handle that a computation still holds (so still in memory), or None."""
        with self._books:
            handle, _, _ = self._evicted.get(model_id, (None, None, 0))
        return handle() if handle is not None else None

    def was_evicted(self, model_id: str) -> bool:
        with self._books:
            return model_id in self._evicted

    def used_bytes(self) -> int:
        """Resident weights, and evicted ones a computation still holds."""
        with self._books:
            return (sum(size for _, size in self._resident.values())
                    + sum(size for _, model, size in self._evicted.values() if model() is not None))

    def _held_after_eviction(self) -> list[str]:
        return [model_id for model_id, (_, model, _) in self._evicted.items() if model() is not None]

    def ids(self) -> list[str]:
        with self._books:
            return list(self._resident)

    def make_room(self, need: int, budget: int, label: str) -> list[str]:
        """Evict idle models, least recently used first, until `need` more bytes fit; the evicted ids."""
        if need > budget:
            raise UserError(f"{label} needs {_mb(need)} of memory for its weights, over this server's model memory "
                            f"budget of {_mb(budget)} (set DASH_MODEL_MEMORY_MB to change it).")
        with self._books:
            evicted = self._evict_idle(need, budget)
        if evicted or self.used_bytes() + need > budget:
            gc.collect()  # the weights go now, not at the next collection: the new model is about to be read
        with self._books:
            free, busy = budget - self.used_bytes(), ", ".join([*self._resident, *self._held_after_eviction()])
        if free < need:
            raise UserError(f"{label} needs {_mb(need)} but only {_mb(free)} of the model "
                            f"memory budget ({_mb(budget)}, DASH_MODEL_MEMORY_MB) is free, and the models holding "
                            f"the rest are in use by running computations ({busy}). Try again when they finish.")
        return evicted

    def _evict_idle(self, need: int, budget: int) -> list[str]:
        evicted = []
        for model_id in list(self._resident):  # ids only: a local reference would keep an evicted model alive
            if self.used_bytes() + need <= budget:
                break
            if not self._in_use(self._model_of(self._resident[model_id][0])):
                self._evict(model_id)
                evicted.append(model_id)
        return evicted

    def add(self, model_id: str, handle: H, size: int) -> None:
        with self._books:
            self._evicted.pop(model_id, None)  # a revived one moves back: counted once
            self._resident[model_id] = (handle, size)

    def _evict(self, model_id: str) -> None:
        handle, size = self._resident.pop(model_id)  # a computation may hold the handle or only its model
        self._evicted[model_id] = (weakref.ref(handle), weakref.ref(self._model_of(handle)), size)
