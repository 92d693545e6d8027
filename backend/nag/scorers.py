"""Ranking methods, by name: NAG similarity and the two baselines (embedding cosine, random).

A scorer is prepared once from the target sets, then scores the pool one streamed slice at a time:
`run(state, docs) -> [M, n]` similarities (higher = closer to target m). A document's score must not
depend on the other documents of its slice (tests/nag/test_contracts.py checks every registered scorer).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from backend.corpus.documents import Document
from backend.models.loading import ModelHandle
from backend.nag.extract import DocFeatures, ExtractConfig
from backend.nag.featurecache import features_for
from backend.nag.profile import similarity
from backend.nag.targets import TargetSet, target_profiles
from backend.progress import Partial, Progress, SubProgress
from backend.variants import Registry, Variant


@dataclass(frozen=True)
class SliceScores:
    """sim `[M, n]`; n_tokens `[n]` full token counts (the budget's unit); truncated: documents cut at max_length."""

    sim: np.ndarray
    n_tokens: np.ndarray
    truncated: int
    cache_hits: int = 0


def _token_counts(handle: ModelHandle, docs: list[Document], max_length: int) -> tuple[np.ndarray, int]:
    counts = np.array([len(ids) for ids in handle.tokenizer([d.text for d in docs], add_special_tokens=False)
                       ["input_ids"]], dtype=np.int64)
    return counts, int((counts > max_length).sum())


def _nag_prepare(handle, target_sets, extract: ExtractConfig, progress):
    return target_profiles(handle, target_sets, extract, progress)


@dataclass(frozen=True)
class ScoredSoFar:
    """A slice's partial scores: the documents scored so far (their positions in the slice) and their scores."""

    positions: tuple[int, ...]
    scores: SliceScores


def _nag_scores(state, features: list[DocFeatures], extract: ExtractConfig, hits: int = 0) -> SliceScores:
    tops = np.stack([f.top[:, :extract.top_k] for f in features])
    sim = np.stack([similarity(tops, weights) for weights in state.weights])
    return SliceScores(sim=sim, n_tokens=np.array([f.n_tokens for f in features], dtype=np.int64),
                       truncated=sum(f.used_tokens < f.n_tokens for f in features), cache_hits=hits)


def _nag_score(state, handle, docs, extract: ExtractConfig, seed, progress) -> SliceScores:
    def scored(partial: Partial) -> Partial | None:  # the slice's features so far -> their scores
        positions = tuple(i for i, f in enumerate(partial.value) if f is not None)
        if not positions:
            return None
        scores = _nag_scores(state, [partial.value[i] for i in positions], extract)
        return Partial(ScoredSoFar(positions, scores), partial.done, partial.total, partial.unit)

    batch = features_for(handle, docs, extract, SubProgress(progress, convert=scored))
    return _nag_scores(state, batch.features, extract, batch.hits)


def _embedding_prepare(handle, target_sets, extract, progress):
    from backend.nag.embedding import centroid

    progress(0.5, "embedding the targets")
    return np.stack([centroid([d.text for d in t.documents]) for t in target_sets])


def _embedding_score(centroids, handle, docs, extract, seed, progress) -> SliceScores:
    from backend.nag.embedding import document_embeddings

    vectors, hits = document_embeddings(docs)
    sim = centroids @ vectors.T
    counts, truncated = _token_counts(handle, docs, extract.max_length)
    return SliceScores(sim=sim.astype(np.float64), n_tokens=counts, truncated=truncated, cache_hits=hits)


def _random_prepare(handle, target_sets, extract, progress):
    return len(target_sets)


def random_score(seed: int, doc_id: str, target: int) -> float:
    """A uniform number in [0, 1) fixed by (seed, id, target): independent of slicing and file order."""
    digest = hashlib.sha256(f"{seed}\x00{target}\x00{doc_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def _random_score(n_targets, handle, docs, extract, seed, progress) -> SliceScores:
    sim = np.array([[random_score(seed, d.id, m) for d in docs] for m in range(n_targets)])
    counts, truncated = _token_counts(handle, docs, extract.max_length)
    return SliceScores(sim=sim, n_tokens=counts, truncated=truncated)


def _no_state(handle, target_sets, extract, progress):
    return None


@dataclass(frozen=True)
class Scorer(Variant):
    """`prepare(handle, target_sets, extract, progress) -> state` runs once per ranking; `run(state, handle,
    docs, extract, seed, progress) -> SliceScores` scores one streamed slice (`sim [M, n]`)."""

    prepare: Callable[[ModelHandle, list[TargetSet], ExtractConfig, Progress], Any] = _no_state


SCORERS: Registry[Scorer] = Registry("nag-scorers", "ranking method")
SCORERS.register(Scorer(
    "nag", "NAG similarity", "Share of the target profile covered by the document's top-K neurons per layer, "
    "averaged over layers", _nag_score, prepare=_nag_prepare))
SCORERS.register(Scorer(
    "embedding", "Embedding cosine (all-MiniLM-L6-v2)", "Cosine between the document's sentence embedding and "
    "the mean target embedding", _embedding_score, prepare=_embedding_prepare))
SCORERS.register(Scorer(
    "random", "Random", "A seeded uniform score per document (the random-selection baseline)", _random_score,
    prepare=_random_prepare))
