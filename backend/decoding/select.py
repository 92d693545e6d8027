"""Choosing one output among several sequences: by score, or by (weighted) majority answer."""
from __future__ import annotations

from collections import defaultdict

import numpy as np


def selection_mode(selection: str, has_checker: bool) -> str:
    """"auto" means vote when answers can be extracted, score otherwise."""
    if selection == "auto":
        return "vote" if has_checker else "score"
    return selection


def choose(scores: np.ndarray, answers: list[int | None], mode: str, weights: np.ndarray | None = None) -> int:
    """Index of the chosen sequence.

    scores `[n]`: log-likelihoods or log-weights. "score": the argmax. "vote": the answer with the
    largest total weight (`weights` `[n]`, uniform when None) among sequences that have an answer;
    within it, the best-scoring sequence. Falls back to "score" when no sequence has an answer.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if mode == "vote" and any(a is not None for a in answers):
        w = np.ones(len(answers)) if weights is None else np.asarray(weights, dtype=np.float64)
        totals: dict[int, float] = defaultdict(float)
        for a, wi in zip(answers, w):
            if a is not None:
                totals[a] += wi
        # ties between answers go to the one holding the best single score
        best = max(totals, key=lambda a: (totals[a], max(s for s, b in zip(scores, answers) if b == a)))
        members = [i for i, a in enumerate(answers) if a == best]
        return max(members, key=lambda i: scores[i])
    return int(np.argmax(scores))


def agreement(answers: list[int | None], weights: np.ndarray | None = None) -> float:
    """Share of the (weighted) population holding the most common answer; None answers count as disagreeing."""
    if not answers:
        return 0.0
    w = np.ones(len(answers)) if weights is None else np.asarray(weights, dtype=np.float64)
    totals: dict[int, float] = defaultdict(float)
    for a, wi in zip(answers, w):
        if a is not None:
            totals[a] += wi
    return float(max(totals.values(), default=0.0) / w.sum())
