"""Test models built once per test run, shared by pytest-xdist's worker processes.

The first process of a run (the xdist controller, or the only process of a plain run) makes a folder and
names it in DASH_TESTS_SHARED; the workers it starts inherit the variable. `built_once(name, build)` builds
`<folder>/<name>` with `build(path)` the first time any process asks for it, under a file lock, and
returns the path; the others wait for the lock and reuse it. Builds are seeded, so a shared model is the one
each worker would have built itself. Nothing is kept between runs.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

ENV = "DASH_TESTS_SHARED"
DONE = ".built"


def shared_dir() -> Path:
    folder = os.environ.get(ENV)
    if not folder:
        folder = tempfile.mkdtemp(prefix="dash-tests-shared-")
        os.environ[ENV] = folder  # inherited by the xdist workers started after this
    return Path(folder)


def built_once(name: str, build: Callable[[Path], Path]) -> Path:
    target = shared_dir() / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{target}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / DONE).exists():
            partial = Path(f"{target}.partial-{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            build(partial)
            (partial / DONE).touch()
            shutil.rmtree(target, ignore_errors=True)
            partial.rename(target)
    return target
