"""The composition root: importing the modules below registers every feature's variants.

Entry points (the CLI, the app, benchmarks, the test session) call `load_all()` once. A feature
adds a family of variants by registering them in its own module and listing that module here;
no core package (decoding, models, store) imports a feature.
"""
from __future__ import annotations

import importlib

FEATURE_MODULES: tuple[str, ...] = (
    "backend.watermark.ipmark.method",
    "backend.watermark.kgw.method",
    "backend.watermark.attacks",
    "backend.decoding.algorithms",
    "backend.disagreement.strategy",
    "backend.mt.attribution",
    "backend.mt.prompts",
    "backend.mt.prompt_kinds",
    "backend.mt.steering",
    "backend.mt.experiments",
    "backend.nag.scorers",
    "backend.nag.impact",
    "backend.fp8.spectral",
    "backend.fp8.formats",
)

_loaded = False


def load_all() -> None:
    """Import every registering module (idempotent)."""
    global _loaded
    if not _loaded:
        for path in FEATURE_MODULES:
            importlib.import_module(path)
        _loaded = True
