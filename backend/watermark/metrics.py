"""Detection metrics from scores of positives (watermarked) and negatives (not watermarked)."""
from __future__ import annotations

import numpy as np


def roc_auc(pos: list[float], neg: list[float]) -> float:
    """Area under the ROC curve (Mann-Whitney U / (n_pos n_neg), ties counted half); nan if a side is empty."""
    if not pos or not neg:
        return float("nan")
    from scipy.stats import rankdata  # here: scipy.stats costs every process that loads the features ~0.5 s

    ranks = rankdata(np.concatenate([pos, neg]))
    u = ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2
    return float(u / (len(pos) * len(neg)))


def threshold_at_fpr(neg: list[float], fpr: float) -> float:
    """The smallest threshold t with (#neg > t) / n_neg <= fpr (a positive must score above t)."""
    ordered = np.sort(np.asarray(neg, dtype=float))[::-1]
    k = int(np.floor(fpr * len(ordered)))  # negatives allowed above the threshold
    return float(ordered[k]) if k < len(ordered) else -np.inf


def tpr_at_fpr(pos: list[float], neg: list[float], fpr: float) -> float:
    if not pos or not neg:
        return float("nan")
    return float(np.mean(np.asarray(pos) > threshold_at_fpr(neg, fpr)))


def roc_curve(pos: list[float], neg: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, tpr) points for every distinct threshold, from (0, 0) to (1, 1)."""
    scores = np.concatenate([pos, neg]).astype(float)
    labels = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
    order = np.argsort(-scores, kind="stable")
    scores, labels = scores[order], labels[order]
    distinct = np.r_[np.where(np.diff(scores))[0], len(scores) - 1]
    tps = np.cumsum(labels)[distinct]
    fps = (distinct + 1) - tps
    tpr = np.r_[0.0, tps / max(len(pos), 1)]
    fpr = np.r_[0.0, fps / max(len(neg), 1)]
    return fpr.astype(np.float32), tpr.astype(np.float32)
