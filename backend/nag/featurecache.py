"""Document features cached per (model fingerprint, document text hash, impact, max_length).

Lookups for a whole slice of documents are one read of the artifact table (a hit records no run);
documents not found are extracted together by the batched path and each stored as its own artifact,
so a document seen in any earlier pool or target set is never run through the model again.

Reads and writes go through the store's slice API (`backend.store.artifacts.cached_many`: one store
open per slice; the documents are uses of the computation that asked, never run rows of their own): one
`cached` call per document costs a store open per document, ~0.2 s on a busy machine, more than the model.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.corpus.documents import Document
from backend.models.loading import ModelHandle
from backend.nag.extract import DocFeatures, ExtractConfig, effective_max_length, extract_batched
from backend.params import require
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
    return DocKey(digest=doc.digest, impact=config.impact, max_length=effective_max_length(handle, config),
                  stored_k=config.stored_k)


@dataclass(frozen=True)
class FeatureBatch:
    """Features of a slice of documents, in order; hits: how many came from the cache."""

    features: list[DocFeatures]
    hits: int


def features_for(handle: ModelHandle, docs: list[Document], config: ExtractConfig,
                 progress: Progress = silent) -> FeatureBatch:
    width = handle.info.intermediate_size  # every path to a model's features passes here
    require(config.top_k <= width, f"top_k must be between 1 and {width} (the MLP width), got {config.top_k}.")
    keys = [doc_key(handle, doc, config) for doc in docs]
    texts = {key: doc.text for key, doc in zip(keys, docs)}  # the same text twice is extracted once
    done = artifacts.cached_many(
        FEATURE, ACTION, ModelRef.of(handle), keys,
        lambda missing: extract_batched(handle, [texts[key] for key in missing], config, progress), CODE_VERSION)
    progress(1.0, f"features of {len(docs)} documents ({len(docs) - done.computed} cached)")
    return FeatureBatch(features=done.values, hits=len(docs) - done.computed)
