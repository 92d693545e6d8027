"""Budgeted selection from distances: the ordering rule, the token budget and multi-target shares.

Order: ascending distance, ties (to 12 decimals) broken by ascending document id.
Budget: budget_tokens = fraction x (tokens of the whole pool). Each of M targets owns budget/M and
takes documents in its own order, skipping those an earlier target already took, until the next one
would overflow its share (so every target's selection is a prefix of its ranking).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from backend.errors import UserError
from backend.nag.profile import tie_safe


def order_by_distance(distance: np.ndarray, ids: Sequence[str]) -> np.ndarray:
    """Indices sorting documents by (distance, id)."""
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.lexsort((np.asarray(ids, dtype=str), tie_safe(distance)))


@dataclass(frozen=True)
class Selection:
    """selected_by `[N]`: index of the target that took each document, -1 if none; order: ranking order
    (selected documents in selection order, then the rest by their best distance)."""

    selected_by: np.ndarray
    order: np.ndarray
    budget_tokens: int
    used_tokens: tuple[int, ...]  # per target


def select(distance: np.ndarray, ids: Sequence[str], n_tokens: np.ndarray, fraction: float) -> Selection:
    """`distance [M, N]` (one row per target) -> a budgeted selection."""
    if not 0.0 < fraction <= 1.0:
        raise UserError("The token budget must be a fraction in (0, 1].")
    distance = np.atleast_2d(np.asarray(distance, dtype=np.float64))
    n_targets, n_docs = distance.shape
    budget = int(np.floor(fraction * int(np.sum(n_tokens))))
    share = budget / max(n_targets, 1)
    selected_by = np.full(n_docs, -1, dtype=np.int64)
    picked: list[int] = []
    used = []
    for target in range(n_targets):
        spent = 0
        for i in order_by_distance(distance[target], ids):
            if selected_by[i] >= 0:
                continue
            if spent + int(n_tokens[i]) > share:
                break
            selected_by[i] = target
            spent += int(n_tokens[i])
            picked.append(int(i))
        used.append(spent)
    rest = [int(i) for i in order_by_distance(distance.min(axis=0), ids) if selected_by[i] < 0]
    return Selection(selected_by=selected_by, order=np.asarray(picked + rest, dtype=np.int64), budget_tokens=budget,
                     used_tokens=tuple(used))


def precision_at_k(order: np.ndarray, relevant: np.ndarray, ks: Sequence[int]) -> dict[int, float]:
    """Share of relevant documents among the first k of `order`, for each k (k capped at N)."""
    hits = np.cumsum(np.asarray(relevant, dtype=bool)[order])
    return {int(k): float(hits[min(k, len(order)) - 1] / min(k, len(order))) for k in ks if len(order)}
