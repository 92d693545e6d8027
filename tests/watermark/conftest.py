"""Watermark test fixtures: a private master secret and store per test, and a tiny trained writer model."""
from __future__ import annotations

import os

import pytest

from tests.watermark.tiny_writer import build_tiny_writer


@pytest.fixture(autouse=True)
def private_secret(tmp_path, monkeypatch):
    """Every test gets its own secret file (never the repository's data/secrets) and its own store."""
    from backend.watermark import keys

    path = tmp_path / "secrets" / "master.key"
    monkeypatch.setenv(keys.ENV_SECRET_FILE, str(path))
    monkeypatch.delenv(keys.ENV_SECRET, raising=False)
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    return path


FIXED_SECRET = "a fixed secret for a reproducible test"


@pytest.fixture
def fixed_secret(monkeypatch):
    """A fixed master secret, for tests that must be reproducible: a generation replayed or compared across runs,
    or a text that must carry a set number of sentences at each watermark level (the level split depends on the
    secret, and a fresh random one leaves a level short now and then)."""
    from backend.watermark import keys

    monkeypatch.setenv(keys.ENV_SECRET, FIXED_SECRET)


@pytest.fixture(scope="session")
def writer_handle(session_dir):
    """A tiny byte-level llama that writes word-like text with full stops (trained ~10 s on CPU)."""
    from backend.models import load

    directory = build_tiny_writer(session_dir / "models" / "tiny-writer")
    extra = os.environ.get("DASH_EXTRA_MODELS", "")
    if "tiny-writer=" not in extra:
        os.environ["DASH_EXTRA_MODELS"] = f"{extra};tiny-writer={directory}" if extra else f"tiny-writer={directory}"
    return load("tiny-writer")


@pytest.fixture
def identity():
    """One model with three users; returns (model address, [user addresses])."""
    from backend.watermark import identities

    model = identities.add_model("test-model")
    users = [identities.add_user(model.address, f"user {i}").user_address for i in range(3)]
    return model.address, users
