"""The embedding-similarity baseline: all-MiniLM-L6-v2 sentence embeddings (the shared, offline
`backend.models.sentence_embedder`), cached per document text in the store like NAG features, so
re-ranking a pool against a new target never re-embeds it."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from backend.corpus.documents import Document
from backend.models.sentence_embedder import DIM, get_embedder
from backend.progress import Progress
from backend.store import ModelRef
from backend.verbs import Verb, register

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


@dataclass(frozen=True, eq=False)
class Texts:
    """Document texts by key: what the sentence embedder embeds (the embedder, not the ranked model, is the
    stored result's model)."""

    texts: dict[EmbeddingKey, str]


def embedder_ref(_texts: Texts) -> ModelRef:
    return ModelRef(EMBEDDER_ID, get_embedder().fingerprint)


def _embed_slice(docs: Texts, missing: list[EmbeddingKey]) -> list[np.ndarray]:
    return list(embed([docs.texts[key] for key in missing]))


def _embed_one(docs: Texts, key: EmbeddingKey, _progress: Progress) -> np.ndarray:
    return _embed_slice(docs, [key])[0]


doc_embedding = register(Verb("nag", "doc-embedding", EmbeddingKey, _embed_one, "one document's sentence embedding "
                              "(stored per document, read a slice at a time)",
                              reads=(sys.modules[__name__],), ref=embedder_ref))


def document_embeddings(docs: Sequence[Document]) -> tuple[np.ndarray, int]:
    """(`[N, 384]` embeddings in order, how many came from the store)."""
    if not docs:
        return np.zeros((0, DIM), dtype=np.float32), 0
    keys = [EmbeddingKey(d.digest) for d in docs]
    texts = Texts({key: doc.text for key, doc in zip(keys, docs)})  # repeated texts: embedded once
    done = doc_embedding.many(texts, keys, lambda missing: _embed_slice(texts, missing))
    return np.stack([np.asarray(v, dtype=np.float32) for v in done.values]), done.hits
