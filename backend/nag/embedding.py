"""The embedding-similarity baseline: all-MiniLM-L6-v2 sentence embeddings (the shared, offline
`backend.models.sentence_embedder`), cached per document text in the store like NAG features, so
re-ranking a pool against a new target never re-embeds it."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from backend.corpus.documents import Document
from backend.models.sentence_embedder import DIM, get_embedder
from backend.store import ModelRef, artifacts

FEATURE = "nag"
ACTION = "doc-embedding"
CODE_VERSION = "1"
EMBEDDER_ID = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class EmbeddingKey:
    digest: str


def embed(texts: Sequence[str]) -> np.ndarray:
    """`[N, 384]` unit-norm float32 embeddings."""
    return get_embedder().embed(list(texts)) if texts else np.zeros((0, DIM), dtype=np.float32)


def centroid(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm mean embedding of a target set `[384]`."""
    mean = embed(texts).mean(axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-12)


def document_embeddings(docs: Sequence[Document]) -> tuple[np.ndarray, int]:
    """(`[N, 384]` embeddings in order, how many came from the store)."""
    if not docs:
        return np.zeros((0, DIM), dtype=np.float32), 0
    keys = [EmbeddingKey(d.digest) for d in docs]
    texts = {key: doc.text for key, doc in zip(keys, docs)}  # repeated texts: embedded once
    done = artifacts.cached_many(FEATURE, ACTION, ModelRef(EMBEDDER_ID, get_embedder().fingerprint), keys,
                                 lambda missing: list(embed([texts[key] for key in missing])), CODE_VERSION)
    return np.stack([np.asarray(v, dtype=np.float32) for v in done.values]), done.hits
