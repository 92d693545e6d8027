"""Shared fixtures: a private store and tiny allowlisted models for the whole test session.

The environment is set before any test imports the backend settings, so the app (AppTest runs
in-process) and the backend see the same tiny models and the same temporary DuckDB file.

Under pytest-xdist (`make test` runs `-n 2`) every worker is its own process with its own session folder,
store and lock files (the folder is named after PYTEST_XDIST_WORKER; pytest's tmp_path is per worker too);
the tiny models are built once per run and shared read-only (tests/support/shared.py). The cores are shared
out: each worker's torch (and the subprocesses it starts) gets cores / workers threads, so two workers on
two cores do not fight over four spinning OpenMP threads.
"""
from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path

_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under xdist; "" in a plain run
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)


def _hands_out_tests_only() -> bool:
    """Whether this process is pytest-xdist's controller (`make test`'s `-n 2`): it starts the workers and hands them
    the tests, running none itself. Read from the command line, as this file is imported before any hook runs."""
    if _WORKER:
        return False
    args = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *sys.argv[1:]]
    for i, arg in enumerate(args):
        if arg in ("-n", "--numprocesses"):
            value = args[i + 1] if i + 1 < len(args) else "0"
        elif arg.startswith("--numprocesses="):
            value = arg.partition("=")[2]
        elif arg.startswith("-n") and not arg.startswith("--"):
            value = arg[2:]
        else:
            continue
        return value != "0"
    return False


import pytest  # noqa: E402

from tests.support.scheduling import FileSecondsRecorder, LongestFirstScheduling  # noqa: E402
from tests.support.shared import built_once, shared_dir  # noqa: E402

if _hands_out_tests_only():
    # Neither torch nor the backend here (about 6 CPU seconds before the first worker could start): the folder the
    # workers share is named now, so they inherit it, and the first worker to ask builds the tiny models in it.
    shared_dir()
else:
    if _WORKERS > 1:  # before torch is imported: OpenMP reads it once, subprocesses inherit it
        os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // _WORKERS))

    import torch

    from tests.support.tiny import ARCHITECTURES, build_tiny_model

    if _WORKERS > 1:
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

    _SESSION_DIR = Path(tempfile.mkdtemp(prefix=f"dash-tests-{_WORKER}-" if _WORKER else "dash-tests-"))
    # built once per run (by the first worker that gets here; tests/support/shared.py)
    TINY_DIRS = {arch: built_once(f"models/{arch}", lambda path, arch=arch: build_tiny_model(arch, path))
                 for arch in ARCHITECTURES}

    os.environ["DASH_EXTRA_MODELS"] = ";".join(f"tiny-{arch}={path}" for arch, path in TINY_DIRS.items())
    if os.environ.get("DASH_E2E_REAL_MODEL") != "1":
        os.environ["DASH_STORE"] = str(_SESSION_DIR / "store.duckdb")
        os.environ["DASH_DEFAULT_MODEL"] = "tiny-llama"
    # else: `make screenshots` keeps the embedded default model and the default store (warmed by the benchmarks)
    os.environ["HF_HUB_OFFLINE"] = "1"
    # Ray starts its workers at nice 15 (RAY_worker_niceness): beside any other CPU-bound process they would get a
    # few percent of a core, and the Ray tests would take many times as long as the rest of the suite slows down.
    os.environ.setdefault("RAY_worker_niceness", "0")

    from backend.features import load_all  # (after the environment: settings are read on import)
    from hypothesis import HealthCheck, settings

    # Property tests draw the same examples every run (no example database, no wall-clock deadline or "too slow"
    # check, which fail under CPU load); HYPOTHESIS_PROFILE=explore draws fresh ones, as test_fuzz's
    # DASH_FUZZ_RANDOM.
    settings.register_profile("suite", derandomize=True, database=None, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

    load_all()

    @pytest.fixture(params=ARCHITECTURES)
    def tiny_handle(request):
        """A loaded tiny model of each supported architecture."""
        from backend.models import load

        return load(f"tiny-{request.param}")


def pytest_configure(config):
    config.addinivalue_line("markers", "asks_before_computing: keep the pages' ask-before-computing threshold "
                                       "(tests/app/conftest.py turns it off for the other AppTests)")
    if os.environ.get("DASH_RECORD_TEST_SECONDS") == "1" and not _WORKER:  # `make test-seconds`
        config.pluginmanager.register(FileSecondsRecorder(), "file-seconds-recorder")


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup`: each test file runs whole on one worker, in its order (a module's fixtures, a local Ray or
    a trained model, are set up once), the browser tests all on one; the longest groups are handed out first
    (tests/support/scheduling.py)."""
    if config.getvalue("dist") == "loadgroup":
        return LongestFirstScheduling(config, log)
    return None


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_DIR


@pytest.fixture
def fresh_store(tmp_path, monkeypatch) -> Path:
    """A store file of the test's own."""
    path = tmp_path / "store.duckdb"
    monkeypatch.setenv("DASH_STORE", str(path))
    return path
