"""Document features cached per (model fingerprint, document text hash, impact, max_length).

Lookups for a whole slice of documents are one read of the artifact table (a hit records no run);
documents not found are extracted together by the batched path and each stored as its own artifact,
so a document seen in any earlier pool or target set is never run through the model again.

Reads and writes go through the verb's slice API (`doc_features.many`, the store's `cached_many`: one store
open per slice; the documents are uses of the computation that asked, never run rows of their own): one
lookup per document costs a store open per document, ~0.2 s on a busy machine, more than the model.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from backend.corpus.documents import Document
from backend.models.loading import ModelHandle
import backend.nag.extract as extract
import backend.nag.impact as impact
from backend.nag.extract import DocFeatures, ExtractConfig, effective_max_length, extract_batched
from backend.params import require
from backend.progress import Partial, Progress, SubProgress, silent
from backend.nag.subject import OnModel
from backend.verbs import Verb, register


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


@dataclass(frozen=True, eq=False)
class DocumentSlice(OnModel):
    """Documents' texts by key and how their features are extracted."""

    config: ExtractConfig
    texts: dict[DocKey, str]


def _extract_slice(docs: DocumentSlice, missing: list[DocKey], progress: Progress = silent) -> list[DocFeatures]:
    """Features of the documents not in the store, extracted together (one batched pass)."""
    return extract_batched(docs.handle, [docs.texts[key] for key in missing], docs.config, progress)


def _extract_one(docs: DocumentSlice, key: DocKey, progress: Progress) -> DocFeatures:
    return _extract_slice(docs, [key], progress)[0]


# The code a document's features depend on: this module, the extraction and the impact measures (every verb
# ranking or profiling with these features reads them too).
FEATURE_READS = (sys.modules[__name__], extract, impact)

doc_features = register(Verb("nag", "doc-features", DocKey, _extract_one, "one document's top-K neurons per layer "
                             "(stored per document, read a slice at a time)", reads=FEATURE_READS, ref=OnModel.model))


def _in_slice(partial: Partial, keys: list[DocKey], missing: list[DocKey]) -> Partial:
    """The features extracted so far of the slice's missing documents -> the slice's, in its order (None: not known
    yet; a stored document's comes with the whole slice)."""
    extracted = dict(zip(missing, partial.value))
    value = tuple(extracted.get(key) for key in keys)
    return Partial(value, sum(f is not None for f in value), len(keys), "documents")


def features_for(handle: ModelHandle, docs: list[Document], config: ExtractConfig,
                 progress: Progress = silent) -> FeatureBatch:
    width = handle.info.intermediate_size  # every path to a model's features passes here
    require(config.top_k <= width, f"top_k must be between 1 and {width} (the MLP width), got {config.top_k}.")
    keys = [doc_key(handle, doc, config) for doc in docs]
    texts = {key: doc.text for key, doc in zip(keys, docs)}  # the same text twice is extracted once
    slice_ = DocumentSlice(handle, config, texts)
    done = doc_features.many(slice_, keys, lambda missing: _extract_slice(
        slice_, missing, SubProgress(progress, convert=lambda partial: _in_slice(partial, keys, missing))))
    progress(1.0, f"features of {len(docs)} documents ({len(docs) - done.computed} cached)")
    return FeatureBatch(features=done.values, hits=len(docs) - done.computed)
