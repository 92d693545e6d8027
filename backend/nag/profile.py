"""Target profiles and NAG similarity (pure numpy, no model).

Profile of a target set, per layer l: w_l[i] = (number of target documents with neuron i in their
layer-l top-K) / (documents x K), so each layer sums to 1.
Similarity of a document d: sim(d) = (1/L) * sum_l sum_{i in TopK_l(d)} w_l[i], in [0, 1];
distance = 1 - sim.
"""
from __future__ import annotations

import numpy as np

from backend.errors import UserError

TIE_DECIMALS = 12  # distances equal to 12 decimals are ties, broken by document id


def build_profile(tops: np.ndarray, n_neurons: int) -> np.ndarray:
    """`[N, L, K]` top-neuron indices of N target documents -> `[L, n_neurons]` float64 weights, rows sum to 1."""
    if tops.ndim != 3 or tops.shape[0] == 0:
        raise UserError("A target set needs at least one non-empty document.")
    n_docs, n_layers, k = tops.shape
    counts = np.zeros((n_layers, n_neurons), dtype=np.float64)
    rows = np.broadcast_to(np.arange(n_layers)[None, :, None], tops.shape)
    np.add.at(counts, (rows.ravel(), tops.ravel()), 1.0)
    return counts / counts.sum(axis=1, keepdims=True)


def similarity(tops: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """`[N, L, K]` indices, `[L, I]` profile -> `[N]` NAG similarity in [0, 1].

    Each document's indices are summed in ascending index order, so two documents with the same
    neuron sets get bit-identical scores (a true tie) whatever their impact order.
    """
    if tops.shape[0] == 0:
        return np.zeros(0)
    ordered = np.sort(tops, axis=-1)
    layer = np.arange(tops.shape[1])[None, :, None]
    return weights[layer, ordered].sum(axis=-1).mean(axis=-1)


def tie_safe(distance: np.ndarray) -> np.ndarray:
    """Distances rounded so that mathematically equal sums compare equal despite float rounding."""
    return np.round(np.asarray(distance, dtype=np.float64), TIE_DECIMALS)


def top_profile_neurons(weights: np.ndarray, per_layer: int) -> np.ndarray:
    """`[L, per_layer]` indices of the heaviest neurons of each layer (equal weights: lower index first)."""
    return np.argsort(-weights, axis=1, kind="stable")[:, :per_layer]
