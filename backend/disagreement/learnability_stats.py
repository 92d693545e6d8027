"""The arithmetic of the learnability view: a fixed random projection of each gradient, the cosine-similarity matrix,
each example's mean similarity to the rest, a clustering order for the heatmap, and the test of the finding.

CountSketch (a sparse random projection: coordinate j is added, with a random sign, to bucket h(j)) keeps inner
products unbiased, with a spread of about |g||g'|/sqrt(D), and costs one pass over the gradient, so a 4.9M-parameter
LoRA gradient becomes D numbers as it streams past and the full gradients are never kept.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch


@lru_cache(maxsize=2)
def _hash(size: int, dim: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    buckets = torch.randint(0, dim, (size,), generator=generator)
    signs = torch.randint(0, 2, (size,), generator=generator, dtype=torch.int8).float().mul_(2).sub_(1)
    return buckets, signs


def sketch(vector: torch.Tensor, dim: int, seed: int) -> np.ndarray:
    """The CountSketch of `vector` `[P]` in `dim` numbers (float32); dim 0 keeps the vector itself."""
    vector = vector.detach().float().reshape(-1).cpu()
    if dim == 0:
        return vector.numpy().copy()
    buckets, signs = _hash(vector.numel(), dim, seed)
    return torch.zeros(dim).index_add_(0, buckets, vector * signs).numpy()


def cosine_matrix(rows: np.ndarray) -> np.ndarray:
    """`[n, n]` cosine similarities of the rows of `[n, D]` (a zero row is similar to nothing: 0)."""
    rows = rows.astype(np.float64)
    norms = np.linalg.norm(rows, axis=1)
    unit = rows / np.where(norms > 0, norms, 1.0)[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0)


def mean_to_rest(similarity: np.ndarray) -> np.ndarray:
    """Each example's mean similarity to the other examples `[n]` (NaN for a set of one)."""
    n = similarity.shape[0]
    if n < 2:
        return np.full(n, np.nan)
    return (similarity.sum(axis=1) - np.diag(similarity)) / (n - 1)


def cluster_order(similarity: np.ndarray) -> np.ndarray:
    """Leaf order of average-linkage clustering on 1 - cosine, so similar examples sit together in the heatmap."""
    n = similarity.shape[0]
    if n < 3:
        return np.arange(n)
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    distance = np.clip(1.0 - similarity, 0.0, 2.0)
    np.fill_diagonal(distance, 0.0)
    return leaves_list(linkage(squareform((distance + distance.T) / 2, checks=False), "average"))


@dataclass(frozen=True)
class GroupTest:
    """Mean similarity to the rest, unlearnable against learned examples."""

    n_unlearnable: int
    n_learned: int
    median_unlearnable: float
    median_learned: float
    mann_whitney_u: float  # U of the unlearnable group
    p_value: float  # two-sided Mann-Whitney (NaN when a group is empty)
    auroc: float  # P(an unlearnable example is less similar than a learned one), ties half: 0.5 = no signal


def group_test(unlearnable: np.ndarray, learned: np.ndarray) -> GroupTest:
    nu, nl = len(unlearnable), len(learned)
    if not nu or not nl:
        nan = float("nan")
        return GroupTest(nu, nl, float(np.median(unlearnable)) if nu else nan,
                         float(np.median(learned)) if nl else nan, nan, nan, nan)
    from scipy.stats import mannwhitneyu

    test = mannwhitneyu(unlearnable, learned, alternative="two-sided")
    less = (unlearnable[:, None] < learned[None, :]).sum() + 0.5 * (unlearnable[:, None] == learned[None, :]).sum()
    return GroupTest(nu, nl, float(np.median(unlearnable)), float(np.median(learned)), float(test.statistic),
                     float(test.pvalue), float(less / (nu * nl)))


@dataclass(frozen=True)
class BeyondLoss:
    """Does similarity predict unlearnability once the loss is known? Logistic regression of unlearnable (1) vs
    learned (0) on the standardised log loss, then on log loss and mean similarity: the likelihood-ratio test of
    the added similarity term (1 degree of freedom) and its coefficient's sign (negative: less similar, more
    likely unlearnable, at the same loss)."""

    n: int
    similarity_coefficient: float  # per standard deviation of the mean similarity
    likelihood_ratio: float
    p_value: float


def _logistic_log_likelihood(x: np.ndarray, y: np.ndarray, iterations: int = 50) -> tuple[float, np.ndarray]:
    """Maximum log-likelihood of a logistic regression (Newton's method, a small ridge so separable data stays
    finite) and its coefficients."""
    beta = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + 1e-6 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, x.T @ (y - p) - 1e-6 * beta)
        beta = beta + step
        if np.abs(step).max() < 1e-10:
            break
    z = x @ beta
    return float(np.sum(y * z - np.logaddexp(0.0, z))), beta


def beyond_loss(similarity: np.ndarray, loss: np.ndarray, unlearnable: np.ndarray) -> BeyondLoss:
    """The likelihood-ratio test of similarity added to the loss (see BeyondLoss); NaN with fewer than 5 of each."""
    y = unlearnable.astype(float)
    if y.sum() < 5 or (1 - y).sum() < 5:
        nan = float("nan")
        return BeyondLoss(len(y), nan, nan, nan)
    from scipy.stats import chi2

    def standard(v: np.ndarray) -> np.ndarray:
        return (v - v.mean()) / (v.std() or 1.0)

    ones, log_loss, sim = np.ones_like(y), standard(np.log(np.maximum(loss, 1e-12))), standard(similarity)
    reduced, _ = _logistic_log_likelihood(np.column_stack([ones, log_loss]), y)
    full, beta = _logistic_log_likelihood(np.column_stack([ones, log_loss, sim]), y)
    ratio = max(0.0, 2 * (full - reduced))
    return BeyondLoss(len(y), float(beta[2]), ratio, float(chi2.sf(ratio, 1)))
