"""Per-sentence signatures, computed once per text: semantic (LSH bits of the sentence embedding) and
syntactic (the function-word skeleton, backend.watermark.skeleton).

Semantic signature: the sign bits of `n_bits` random hyperplanes through the centre of the embedding
cloud. The hyperplanes are public (fixed seed): the secret is in the keyed bit, not in the projection.
Centring matters: MiniLM embeddings share a common direction, so hyperplanes through the origin would
give nearly constant bits. The centre is the mean embedding of the shipped human-written sentences
(data/embedding_center.json; `python -m backend watermark center` regenerates it).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from backend.watermark.corpus import DATA, human_texts
from backend.models.sentence_embedder import DIM, get_embedder
from backend.watermark.segment import Unit, split_units
from backend.watermark.skeleton import skeleton

PROJECTION_SEED = 20240611
CENTER_FILE = DATA / "embedding_center.json"


@dataclass(frozen=True)
class Signature:
    """What the watermark reads from one sentence unit."""

    text: str
    start: int
    end: int
    usable: bool  # at least MIN_WORDS words
    semantic: str  # n_bits characters of 0/1
    syntactic: str  # skeleton
    margin: float  # smallest |projection| over the hyperplanes (how stable the semantic bits are)


@lru_cache(maxsize=8)
def hyperplanes(n_bits: int) -> np.ndarray:
    """`[384, n_bits]` unit normals, the same for everyone."""
    planes = np.random.default_rng(PROJECTION_SEED).standard_normal((DIM, n_bits)).astype(np.float32)
    return planes / np.linalg.norm(planes, axis=0, keepdims=True)


@lru_cache(maxsize=1)
def center() -> np.ndarray:
    if CENTER_FILE.exists():
        return np.asarray(json.loads(CENTER_FILE.read_text())["center"], dtype=np.float32)
    return compute_center()


def compute_center(write: bool = False) -> np.ndarray:
    """Mean embedding of the shipped human sentences (optionally saved for later processes)."""
    units = [u.text for text in human_texts() for u in split_units(text)]
    mean = get_embedder().embed(units).mean(axis=0)
    if write:
        CENTER_FILE.write_text(json.dumps({"sentences": len(units), "center": [round(float(v), 6) for v in mean]}))
        center.cache_clear()
    return mean.astype(np.float32)


def semantic_bits(embeddings: np.ndarray, n_bits: int) -> tuple[list[str], np.ndarray]:
    """Bit strings and margins for `[n, 384]` embeddings."""
    projected = (embeddings - center()) @ hyperplanes(n_bits)  # [n, n_bits]
    bits = ["".join("1" if v > 0 else "0" for v in row) for row in projected]
    margins = np.abs(projected).min(axis=1) if len(projected) else np.zeros(0)
    return bits, margins


def sign_units(units: list[Unit], n_bits: int) -> list[Signature]:
    """Signatures of already segmented units (one embedding batch for all of them)."""
    if not units:
        return []
    bits, margins = semantic_bits(get_embedder().embed([u.text for u in units]), n_bits)
    return [Signature(text=u.text, start=u.start, end=u.end, usable=u.usable, semantic=b, syntactic=skeleton(u.text),
                      margin=float(m))
            for u, b, m in zip(units, bits, margins)]


def sign_text(text: str, n_bits: int) -> list[Signature]:
    return sign_units(split_units(text), n_bits)
