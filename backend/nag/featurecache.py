"""Document features cached per (model fingerprint, document text hash, impact, max_length).

Lookups for a whole slice of documents are one read of the artifact table (a hit records no run);
documents not found are extracted together by the batched path and each stored as its own artifact,
so a document seen in any earlier pool or target set is never run through the model again.

Reads and writes go through the store's slice API (`lookup_many` / `store_many`: one store open per
slice, each artifact with its run row as `cached` writes them): one `cached` call per document costs a
store open per document, ~0.2 s on a busy machine, more than the model itself.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from backend.models.loading import ModelHandle
from backend.nag.corpus import Document
from backend.nag.extract import DocFeatures, ExtractConfig, effective_max_length, extract_batched
from backend.progress import Progress, silent
from backend.store import ModelRef, artifacts

FEATURE = "nag"
ACTION = "doc-features"
CODE_VERSION = "1"


@dataclass(frozen=True)
class DocKey:
    """The cache key of one document's features."""

    digest: str
    impact: str
    max_length: int
    stored_k: int


def doc_key(handle: ModelHandle, doc: Document, config: ExtractConfig) -> DocKey:
    return DocKey(doc.digest, config.impact, effective_max_length(handle, config), config.stored_k)


def lookup_many(handle: ModelHandle, keys: list[DocKey]) -> dict[DocKey, DocFeatures]:
    found = artifacts.lookup_many(FEATURE, ACTION, ModelRef.of(handle), keys, CODE_VERSION)
    return {keys[i]: feats for i, feats in found.items()}


def store_many(handle: ModelHandle, items: list[tuple[DocKey, DocFeatures]], seconds: float) -> None:
    """Store several documents' features (and their run rows) in one transaction."""
    artifacts.store_many(FEATURE, ACTION, ModelRef.of(handle), items, seconds, CODE_VERSION)


@dataclass(frozen=True)
class FeatureBatch:
    """Features of a slice of documents, in order; hits: how many came from the cache."""

    features: list[DocFeatures]
    hits: int


def features_for(handle: ModelHandle, docs: list[Document], config: ExtractConfig,
                 progress: Progress = silent, use_cache: bool = True) -> FeatureBatch:
    keys = [doc_key(handle, doc, config) for doc in docs]
    found = lookup_many(handle, keys) if use_cache else {}
    todo: dict[DocKey, str] = {}
    for key, doc in zip(keys, docs):
        if key not in found:
            todo.setdefault(key, doc.text)  # the same text twice is extracted once
    if todo:
        start = time.perf_counter()
        computed = extract_batched(handle, list(todo.values()), config, progress)
        found.update(zip(todo, computed))
        if use_cache:
            store_many(handle, list(zip(todo, computed)), (time.perf_counter() - start) / len(todo))
    progress(1.0, f"features of {len(docs)} documents ({len(docs) - len(todo)} cached)")
    return FeatureBatch([found[key] for key in keys], len(docs) - len(todo))
