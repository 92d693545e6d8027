"""Failure prediction: does a rollout's disagreement (or its base entropy) flag a wrong answer?

A predictor scores each rollout; a higher score should mean "more likely wrong". AUROC is the
probability that a random wrong rollout scores above a random right one (ties count one half).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# name -> per-rollout score from (divergence [L], base entropy [L], k)
PREDICTORS = {
    "topk_divergence": lambda div, ent, k: float(np.sort(div)[::-1][:k].mean()) if len(div) else 0.0,
    "mean_divergence": lambda div, ent, k: float(np.mean(div)) if len(div) else 0.0,
    "mean_entropy": lambda div, ent, k: float(np.mean(ent)) if len(ent) else 0.0,
    "topk_entropy": lambda div, ent, k: float(np.sort(ent)[::-1][:k].mean()) if len(ent) else 0.0,
}


@dataclass(frozen=True)
class FailurePrediction:
    top_k: int
    n_wrong: int
    n_right: int
    auroc: dict[str, float]  # predictor -> AUROC (NaN when only one class is present)
    roc: dict[str, tuple[np.ndarray, np.ndarray]]  # predictor -> (false positive rate [K], true positive rate [K])


def auroc(scores: np.ndarray, wrong: np.ndarray) -> float:
    """Mann-Whitney AUROC of `scores` for the positive class `wrong` (bool)."""
    scores, wrong = np.asarray(scores, dtype=np.float64), np.asarray(wrong, dtype=bool)
    pos, neg = scores[wrong], scores[~wrong]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def roc_curve(scores: np.ndarray, wrong: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) over every distinct threshold, from (0, 0) to (1, 1)."""
    scores, wrong = np.asarray(scores, dtype=np.float64), np.asarray(wrong, dtype=bool)
    n_pos, n_neg = max(wrong.sum(), 1), max((~wrong).sum(), 1)
    fpr, tpr = [0.0], [0.0]
    for threshold in np.unique(scores)[::-1]:
        flagged = scores >= threshold
        tpr.append(float((flagged & wrong).sum() / n_pos))
        fpr.append(float((flagged & ~wrong).sum() / n_neg))
    return np.array(fpr, dtype=np.float32), np.array(tpr, dtype=np.float32)


def predict_failures(divergences: list[np.ndarray], entropies: list[np.ndarray], correct: list[bool],
                     top_k: int = 8) -> FailurePrediction:
    wrong = ~np.asarray(correct, dtype=bool)
    aucs, rocs = {}, {}
    for name, predictor in PREDICTORS.items():
        scores = np.array([predictor(d, e, top_k) for d, e in zip(divergences, entropies)])
        aucs[name] = auroc(scores, wrong)
        rocs[name] = roc_curve(scores, wrong)
    return FailurePrediction(top_k=top_k, n_wrong=int(wrong.sum()), n_right=int((~wrong).sum()), auroc=aucs, roc=rocs)
