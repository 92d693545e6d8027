"""The composition root: importing the modules below registers every feature's variants.

Entry points (the CLI, the app, benchmarks, the test session) call `load_all()` once. A feature
adds a family of variants by registering them in its own module and listing that module here;
no core package (decoding, models, store) imports a feature.
"""
from __future__ import annotations

import importlib

FEATURE_MODULES: tuple[str, ...] = (
    "backend.decoding.algorithms",
)

_loaded = False


def load_all() -> None:
    """Import every registering module (idempotent)."""
    global _loaded
    if not _loaded:
        for path in FEATURE_MODULES:
            importlib.import_module(path)
        _loaded = True
