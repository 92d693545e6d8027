"""Shared fixtures: a private store and tiny allowlisted models for the whole test session.

The environment is set before any test imports the backend settings, so the app (AppTest runs
in-process) and the backend see the same tiny models and the same temporary DuckDB file.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.support.tiny import ARCHITECTURES, build_tiny_model

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="dash-tests-"))
TINY_DIRS = {arch: build_tiny_model(arch, _SESSION_DIR / "models" / arch) for arch in ARCHITECTURES}

os.environ["DASH_EXTRA_MODELS"] = ";".join(f"tiny-{arch}={path}" for arch, path in TINY_DIRS.items())
if os.environ.get("DASH_E2E_REAL_MODEL") != "1":
    os.environ["DASH_STORE"] = str(_SESSION_DIR / "store.duckdb")
    os.environ["DASH_DEFAULT_MODEL"] = "tiny-llama"
# else: `make screenshots` keeps the embedded default model and the default store (warmed by the benchmarks)
os.environ["HF_HUB_OFFLINE"] = "1"

from backend.features import load_all  # noqa: E402  (after the environment: settings are read on import)

load_all()


def pytest_configure(config):
    config.addinivalue_line("markers", "asks_before_computing: keep the pages' ask-before-computing threshold "
                                       "(tests/app/conftest.py turns it off for the other AppTests)")


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_DIR


@pytest.fixture(params=ARCHITECTURES)
def tiny_handle(request):
    """A loaded tiny model of each supported architecture."""
    from backend.models import load

    return load(f"tiny-{request.param}")


@pytest.fixture
def fresh_store(tmp_path, monkeypatch) -> Path:
    """A store file of the test's own."""
    path = tmp_path / "store.duckdb"
    monkeypatch.setenv("DASH_STORE", str(path))
    return path
