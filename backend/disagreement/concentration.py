"""How concentrated a per-token divergence is: Lorenz curve, Gini, shares, where the top tokens sit.

Inputs are pooled over rollouts: values `[N]` (non-negative, nats), the position of each token in its
rollout `[N]`, its rollout's length `[N]`, the base entropy `[N]` and a category label per token.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

POSITION_BINS = 20


@dataclass(frozen=True)
class Concentration:
    signal: str
    n_tokens: int
    lorenz_x: np.ndarray  # [K] cumulative share of tokens (ascending order of divergence), from 0 to 1
    lorenz_y: np.ndarray  # [K] cumulative share of total divergence
    gini: float
    share_tokens_50: float  # smallest share of tokens carrying 50% of the total
    share_tokens_80: float
    share_in_top10: float  # share of the total carried by the top 10% of tokens
    top_fraction: float  # the "top tokens" below are the top `top_fraction` by divergence
    top_relative_positions: np.ndarray  # [n_top] t / T of each top token
    position_hist: np.ndarray  # [POSITION_BINS] share of top tokens per t/T bin
    position_hist_all: np.ndarray  # [POSITION_BINS] the same for all tokens (the chance level)
    high_entropy_quantile: float  # tokens with base entropy above this quantile count as high-entropy
    top_high_entropy_share: float  # share of top tokens that are high-entropy tokens
    entropy_correlation: float  # Spearman correlation of divergence with base entropy
    categories: dict[str, tuple[int, int]]  # category -> (count among top tokens, count among all tokens)

    def category_enrichment(self) -> dict[str, float]:
        """share among top tokens / share among all tokens, per category."""
        n_top = max(sum(top for top, _ in self.categories.values()), 1)
        return {c: (top / n_top) / (total / self.n_tokens) for c, (top, total) in self.categories.items() if total}


def lorenz(values: np.ndarray, points: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """The Lorenz curve sampled at `points` token shares."""
    x = np.sort(np.clip(np.asarray(values, dtype=np.float64), 0.0, None))
    total = x.sum()
    curve = np.concatenate([[0.0], np.cumsum(x) / total if total > 0 else np.linspace(0, 1, len(x))])
    shares = np.linspace(0.0, 1.0, len(curve))
    grid = np.linspace(0.0, 1.0, points)
    return grid, np.interp(grid, shares, curve)


def gini(values: np.ndarray) -> float:
    """G = sum_i (2i - n - 1) x_(i) / (n sum x), x ascending, i = 1..n (0 = equal, -> 1 = one token)."""
    x = np.sort(np.clip(np.asarray(values, dtype=np.float64), 0.0, None))
    n, total = len(x), x.sum()
    if n == 0 or total <= 0:
        return 0.0
    i = np.arange(1, n + 1)
    return float(((2 * i - n - 1) * x).sum() / (n * total))


def share_of_tokens_for(values: np.ndarray, mass: float) -> float:
    """The smallest share of tokens (largest first) whose divergence reaches `mass` of the total."""
    x = np.sort(np.clip(np.asarray(values, dtype=np.float64), 0.0, None))[::-1]
    total = x.sum()
    if len(x) == 0 or total <= 0:
        return float("nan")
    k = int(np.searchsorted(np.cumsum(x), mass * total - 1e-12 * total)) + 1
    return min(k, len(x)) / len(x)


def share_in_top(values: np.ndarray, fraction: float) -> float:
    x = np.sort(np.clip(np.asarray(values, dtype=np.float64), 0.0, None))[::-1]
    total = x.sum()
    if len(x) == 0 or total <= 0:
        return float("nan")
    return float(x[: max(1, math.ceil(fraction * len(x)))].sum() / total)


def top_indices(values: np.ndarray, fraction: float) -> np.ndarray:
    """Indices of the top `fraction` (at least one) of values, largest first (ties: earlier first)."""
    k = max(1, math.ceil(fraction * len(values)))
    return np.argsort(-np.asarray(values, dtype=np.float64), kind="stable")[:k]


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) < 2:
        return float("nan")
    ra = np.argsort(np.argsort(a, kind="stable"), kind="stable").astype(np.float64)
    rb = np.argsort(np.argsort(b, kind="stable"), kind="stable").astype(np.float64)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def concentration(signal: str, values: np.ndarray, positions: np.ndarray, lengths: np.ndarray,
                  base_entropy: np.ndarray, categories: Sequence[str], top_fraction: float = 0.01,
                  high_entropy_quantile: float = 0.8) -> Concentration:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no tokens to analyse")
    rel = np.asarray(positions, dtype=np.float64) / np.asarray(lengths, dtype=np.float64)
    top = top_indices(values, top_fraction)
    bins = np.linspace(0.0, 1.0, POSITION_BINS + 1)
    hist_top = np.histogram(rel[top], bins=bins)[0] / len(top)
    hist_all = np.histogram(rel, bins=bins)[0] / len(rel)
    high = base_entropy > np.quantile(base_entropy, high_entropy_quantile)
    counts_all, counts_top = Counter(categories), Counter(categories[i] for i in top)
    lx, ly = lorenz(values)
    return Concentration(
        signal=signal, n_tokens=int(values.size), lorenz_x=lx.astype(np.float32), lorenz_y=ly.astype(np.float32),
        gini=gini(values), share_tokens_50=share_of_tokens_for(values, 0.5),
        share_tokens_80=share_of_tokens_for(values, 0.8), share_in_top10=share_in_top(values, 0.10),
        top_fraction=top_fraction, top_relative_positions=rel[top].astype(np.float32),
        position_hist=hist_top.astype(np.float32), position_hist_all=hist_all.astype(np.float32),
        high_entropy_quantile=high_entropy_quantile, top_high_entropy_share=float(high[top].mean()),
        entropy_correlation=_spearman(values, np.asarray(base_entropy, dtype=np.float64)),
        categories={c: (counts_top.get(c, 0), n) for c, n in sorted(counts_all.items())})
