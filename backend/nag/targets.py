"""Target sets and their NAG profiles.

A target set is a named list of example documents (a domain's samples, an upload, pasted text).
Several target sets = multi-target mode: each gets its own profile and its own budget share.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from backend.corpus.documents import Document
from backend.errors import UserError
from backend.models.loading import ModelHandle
from backend.nag.extract import ExtractConfig, effective_max_length
from backend.nag.featurecache import features_for
from backend.nag.profile import build_profile
from backend.progress import Progress, scaled, silent

MAX_TARGET_DOCS = 2000  # targets are held in memory (they are examples, not a corpus)


@dataclass(frozen=True)
class TargetSet:
    name: str
    documents: tuple[Document, ...]

    @property
    def digest(self) -> str:
        return hashlib.sha256("|".join(d.digest for d in self.documents).encode()).hexdigest()[:20]


def check_targets(target_sets: list[TargetSet]) -> list[str]:
    """Raise on unusable target sets; return notices for usable but unusual ones."""
    if not target_sets:
        raise UserError("Choose at least one target set.")
    names = [t.name for t in target_sets]
    if len(set(names)) != len(names):
        raise UserError(f"Target set names must differ: {names}.")
    notices = []
    for target in target_sets:
        if not target.documents:
            raise UserError(f"Target set {target.name!r} has no non-empty document.")
        if len(target.documents) > MAX_TARGET_DOCS:
            raise UserError(f"Target set {target.name!r} has {len(target.documents)} documents; at most "
                            f"{MAX_TARGET_DOCS} examples are supported (targets are examples, not a corpus).")
        if len(target.documents) == 1:
            notices.append(f"Target set {target.name!r} has a single document: its profile is just that "
                           "document's own top-K neurons (weight 1/K each).")
    return notices


@dataclass(frozen=True)
class TargetProfiles:
    """names `[M]`; weights `[M, L, I]` float64 profiles (each layer sums to 1); tops: per target
    `[n_docs, L, K]` int32 top-K neuron indices of its documents; doc_ids per target; top_k K."""

    names: tuple[str, ...]
    weights: np.ndarray
    tops: tuple[np.ndarray, ...]
    doc_ids: tuple[tuple[str, ...], ...]
    top_k: int
    n_tokens: tuple[np.ndarray, ...]
    notices: tuple[str, ...]


def target_profiles(handle: ModelHandle, target_sets: list[TargetSet], config: ExtractConfig,
                    progress: Progress = silent) -> TargetProfiles:
    notices = check_targets(target_sets)
    weights, tops, tokens = [], [], []
    for m, target in enumerate(target_sets):
        batch = features_for(handle, list(target.documents), config,
                             scaled(progress, m / len(target_sets), (m + 1) / len(target_sets)))
        top = np.stack([f.top[:, :config.top_k] for f in batch.features]).astype(np.int32)
        tops.append(top)
        tokens.append(np.array([f.n_tokens for f in batch.features], dtype=np.int64))
        weights.append(build_profile(top, handle.info.intermediate_size))
        long = sum(f.used_tokens < f.n_tokens for f in batch.features)
        if long:
            notices.append(f"{long} target document(s) of {target.name!r} are longer than "
                           f"{effective_max_length(handle, config)} tokens (max_length within the model's context) "
                           "and were truncated for the profile.")
    return TargetProfiles(names=tuple(t.name for t in target_sets), weights=np.stack(weights), tops=tuple(tops),
                          doc_ids=tuple(tuple(d.id for d in t.documents) for t in target_sets), top_k=config.top_k,
                          n_tokens=tuple(tokens), notices=tuple(notices))
