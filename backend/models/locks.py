"""One re-entrant lock per model instance.

Hooks are installed on modules shared by every browser session of the app: without a lock, one
session's head ablation would leak into another session's plain forward running at the same time.
Every hooked computation and every decoding step holds the model's lock.
"""
from __future__ import annotations

import threading
import weakref

from torch import nn

_locks: "weakref.WeakKeyDictionary[nn.Module, threading.RLock]" = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def model_lock(model: nn.Module) -> threading.RLock:
    with _guard:
        lock = _locks.get(model)
        if lock is None:
            lock = _locks[model] = threading.RLock()
        return lock
