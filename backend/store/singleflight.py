"""Compute once: concurrent identical requests wait for the first and reuse its artifact.

One advisory file lock per artifact key, beside the store file (`<store>.locks/<key>.lock`). `flock`
conflicts between separate opens of the file, so it serialises threads of one server as well as
separate processes, and the operating system releases it when its holder dies (no stale lease to
expire). A waiter that gives up after `WAIT_S` computes without the lock: slower, never stuck.
"""
from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

WAIT_S = 1800.0  # longer than any single computation the app offers; then compute anyway
POLL_S = 0.05


def lock_dir(store_file: Path) -> Path:
    return store_file.with_name(store_file.name + ".locks")


@contextmanager
def key_lock(store_file: Path, key: str, wait_s: float = WAIT_S,
             on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold the lock of `key` for the body; yields False when it could not be had in `wait_s` (or the
    lock folder cannot be written) and the body runs unlocked. `on_wait` is called once if another holder
    makes this one wait (so a page can say why nothing moves)."""
    try:
        folder = lock_dir(store_file)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield False
        return
    held = False
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if on_wait is not None:
                    on_wait()
                    on_wait = None
                if time.monotonic() >= deadline:
                    break
                time.sleep(POLL_S)
        yield held
    finally:
        if held:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
