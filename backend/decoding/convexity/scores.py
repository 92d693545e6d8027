"""Macro F1 of convexity answers and its bootstrap interval (proportions use backend.significance.wilson_interval)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from backend.tasks.convexity_rules import ANSWERS


def macro_f1(labels: Sequence[str], answers: Sequence[str], classes: Sequence[str] = ANSWERS) -> float:
    """Mean over the classes present in `labels` of each class's F1 (a class never predicted nor present is left
    out; one present but never predicted right scores 0)."""
    scores = []
    for c in classes:
        tp = sum(1 for lab, ans in zip(labels, answers) if lab == c and ans == c)
        fp = sum(1 for lab, ans in zip(labels, answers) if lab != c and ans == c)
        fn = sum(1 for lab, ans in zip(labels, answers) if lab == c and ans != c)
        if tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else float("nan")


def bootstrap_f1(labels: Sequence[str], answers: Sequence[str], resamples: int = 1000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the macro F1 over problems (resampled with replacement)."""
    n = len(labels)
    if n == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    labels, answers = list(labels), list(answers)
    draws = [macro_f1([labels[i] for i in idx], [answers[i] for i in idx])
             for idx in rng.integers(0, n, size=(resamples, n))]
    tail = (1 - level) / 2
    return float(np.quantile(draws, tail)), float(np.quantile(draws, 1 - tail))
