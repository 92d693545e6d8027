"""Choosing heads: the top k% of a head map, and random controls of the same size."""
from __future__ import annotations

import math
import random

import numpy as np

from backend.errors import UserError

Head = tuple[int, int]  # (layer, head)
MAX_PERCENT = 5.0


def head_count(n_layers: int, n_heads: int, percent: float) -> int:
    """k = round(percent% of L*H), at least one head for any positive percentage."""
    if not 0 <= percent <= MAX_PERCENT:
        raise UserError(f"The head percentage must be between 0 and {MAX_PERCENT:g}%.")
    if percent == 0:
        return 0
    return max(1, math.floor(percent / 100 * n_layers * n_heads + 0.5))


def top_heads(scores: np.ndarray, percent: float) -> tuple[Head, ...]:
    """The highest-scoring heads of a `[layers, heads]` map, best first (ties broken by position)."""
    n_layers, n_heads = scores.shape
    k = head_count(n_layers, n_heads, percent)
    order = sorted(range(scores.size), key=lambda i: (-float(scores.flat[i]), i))[:k]
    return tuple((i // n_heads, i % n_heads) for i in order)


def top_heads_in(scores: np.ndarray, percent: float, layers) -> tuple[Head, ...]:
    """The top heads of a map among the given layers only; k is still percent% of all L*H heads."""
    allowed = set(layers)
    masked = np.where(np.isin(np.arange(scores.shape[0]), list(allowed))[:, None], scores, -np.inf)
    return tuple(h for h in top_heads(masked, percent) if h[0] in allowed)


def random_heads(n_layers: int, n_heads: int, k: int, seed: int, exclude: tuple[Head, ...] = ()) -> tuple[Head, ...]:
    """k heads drawn uniformly without replacement, never one of `exclude` (the selected heads)."""
    pool = [(layer, head) for layer in range(n_layers) for head in range(n_heads) if (layer, head) not in set(exclude)]
    if k > len(pool):
        raise UserError(f"Cannot draw {k} random heads from {len(pool)} remaining ones.")
    return tuple(sorted(random.Random(seed).sample(pool, k)))


def top_k_overlap(a: np.ndarray, b: np.ndarray, percent: float) -> float:
    """Fraction of map a's top-k heads that are also in map b's top-k."""
    ta, tb = set(top_heads(a, percent)), set(top_heads(b, percent))
    return len(ta & tb) / len(ta) if ta else float("nan")
