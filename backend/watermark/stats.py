"""Exact tail probabilities and z-scores for weighted sums of fair keyed bits.

Under H0 (text written without the key) each counted keyed bit is an independent fair coin: HMAC
outputs on distinct messages (repeated messages are counted once, see scoring.py). The score of a
level is S = w_sem * X + w_syn * Y with X ~ Bin(n_sem, 1/2), Y ~ Bin(n_syn, 1/2), so
E[S] = (w_sem n_sem + w_syn n_syn) / 2 and Var[S] = (w_sem^2 n_sem + w_syn^2 n_syn) / 4: the variance
of the score actually used (IPMark's reference code uses 0.25 per sentence, which overstates it for
0.5/0.5 weights). The p-value P(S >= s) is the exact convolution of the two binomials, in log space.

Best of K keys. A registry search scores K keys and reports the best one; its raw p-value is then
the minimum of K p-values and is not a p-value any more (with K = 100 keys and continuous scores,
1 - 0.95^100 = 99% of human texts would show "p < 0.05"). The reported `p_corrected` is family-wise over the K keys:
- Šidák, 1 - (1 - p_min)^K, where the K scores are independent given the text: keyed bits under
  distinct keys are outputs of HMAC-SHA256 on the same messages with different keys, i.e. independent
  fair coins under H0 (the PRF assumption the p-values already rest on), and a level's sentences are
  split by the model key alone. For discrete scores P(p_k <= t) <= t, so P(min_k p_k <= t) <=
  1 - (1 - t)^K: the corrected value is a valid (slightly conservative) p-value. Used for the model
  level (K = registered models) and the user level (K = users of the model).
- Bonferroni, min(1, K p_min), which needs no independence (kept for callers whose K scores are correlated).
The decision (backend.watermark.retrieval) is hierarchical: the model level is corrected over the M model keys
only and the user level over the users of that model only, so a crowd of users cannot dilute a model verdict;
each corrected level names its family (`LevelScore.family`, `corrected_over`).
An exact max-of-K null (the distribution of max_k S_k for K independent binomial convolutions) would be
barely tighter than Šidák, which is that distribution's tail for continuous scores, and not defined for
the correlated totals.
"""
from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import logsumexp

_EPS = 1e-9


def _binom():
    """scipy's binomial, imported on first use: scipy.stats costs every process that loads the features ~0.5 s."""
    from scipy.stats import binom

    return binom


@dataclass(frozen=True)
class LevelScore:
    """One level's evidence: counted bits per channel, score, z and exact one-sided p-value."""

    level: str  # "model" | "user" | "total"
    n_sentences: int
    n_sem: int
    n_syn: int
    score: float
    expected: float
    variance: float
    z: float
    p_value: float  # one key's exact p-value (uncorrected when this is the best of several keys)
    log10_p: float
    compared: int = 1  # K: keys this score was the best of (1: one key tested)
    p_corrected: float | None = None  # family-wise p over the K keys (None: K = 1, the raw p is the p)
    correction: str = ""  # "sidak" | "bonferroni" | "" (K = 1)
    family: str = ""  # what the K keys were, in words ("1 model", "100,000 users of model 1"); "" when unlabelled

    @property
    def p_family(self) -> float:
        """The p-value to decide and report with: corrected for the K keys compared."""
        return self.p_value if self.p_corrected is None else self.p_corrected

    @property
    def corrected_over(self) -> str:
        """How `p_family` was corrected, in words: "Šidák over 3 models" (K = 1 is the raw p, Šidák over one)."""
        if not self.family:
            return "" if self.compared <= 1 else f"{CORRECTION_NAMES.get(self.correction, self.correction)} over " \
                f"{self.compared:,} keys"
        return f"{CORRECTION_NAMES.get(self.correction or 'sidak')} over {self.family}"

    @property
    def n_bits(self) -> int:
        return self.n_sem + self.n_syn


@lru_cache(maxsize=65536)
def log_sf_weighted(score: float, n_sem: int, n_syn: int, w_sem: float, w_syn: float) -> float:
    """log P(w_sem X + w_syn Y >= score) for independent X ~ Bin(n_sem, .5), Y ~ Bin(n_syn, .5)."""
    if n_sem + n_syn == 0:
        return 0.0
    if w_syn <= 0 or n_syn == 0:
        return _log_tail(score, n_sem, w_sem)
    if w_sem <= 0 or n_sem == 0:
        return _log_tail(score, n_syn, w_syn)
    x = np.arange(n_sem + 1)
    need = np.ceil((score - w_sem * x) / w_syn - _EPS)  # smallest y reaching the score
    # log P(Y >= need) = log sf(need - 1); need <= 0 means certain
    log_tail_y = np.where(need <= 0, 0.0, _binom().logsf(need - 1, n_syn, 0.5))
    return float(min(0.0, logsumexp(_binom().logpmf(x, n_sem, 0.5) + log_tail_y)))


def _log_tail(score: float, n: int, w: float) -> float:
    if n == 0 or w <= 0:
        return 0.0 if score <= _EPS else -math.inf
    need = math.ceil(score / w - _EPS)
    return 0.0 if need <= 0 else float(_binom().logsf(need - 1, n, 0.5))


def level_score(level: str, n_sentences: int, sem_bits: list[int], syn_bits: list[int],
                w_sem: float, w_syn: float) -> LevelScore:
    n_sem, n_syn = len(sem_bits), len(syn_bits)
    score = w_sem * sum(sem_bits) + w_syn * sum(syn_bits)
    expected = (w_sem * n_sem + w_syn * n_syn) / 2
    variance = (w_sem ** 2 * n_sem + w_syn ** 2 * n_syn) / 4
    z = (score - expected) / math.sqrt(variance) if variance > 0 else 0.0
    log_p = log_sf_weighted(score, n_sem, n_syn, w_sem, w_syn)
    return LevelScore(level=level, n_sentences=n_sentences, n_sem=n_sem, n_syn=n_syn, score=float(score),
                      expected=float(expected), variance=float(variance), z=float(z), p_value=float(math.exp(log_p)),
                      log10_p=float(log_p / math.log(10)))


def sidak(p: float, k: int) -> float:
    """P(min of k independent p-values <= p) = 1 - (1 - p)^k, computed stably for tiny p."""
    if k <= 1:
        return float(p)
    return float(min(1.0, -math.expm1(k * math.log1p(-min(p, 1.0))))) if p < 1 else 1.0


def bonferroni(p: float, k: int) -> float:
    return float(min(1.0, max(k, 1) * p))


CORRECTIONS = {"sidak": sidak, "bonferroni": bonferroni}
CORRECTION_NAMES = {"sidak": "Šidák", "bonferroni": "Bonferroni"}


def best_of(score: LevelScore, k: int, correction: str = "sidak") -> LevelScore:
    """The same score, labelled as the best of k keys with its family-wise p-value."""
    if k <= 1:
        return replace(score, compared=1, p_corrected=None, correction="")
    return replace(score, compared=int(k), p_corrected=CORRECTIONS[correction](score.p_value, k),
                   correction=correction)


def labelled(score: LevelScore, family: str) -> LevelScore:
    """The same score, with the family its p-value was corrected over named ("1 model", "12 users of model 3")."""
    return replace(score, family=family)


def binomial_score(level: str, hits: int, n: int, gamma: float) -> LevelScore:
    """KGW: hits green tokens out of n, each green with probability gamma under H0."""
    expected = gamma * n
    variance = n * gamma * (1 - gamma)
    z = (hits - expected) / math.sqrt(variance) if variance > 0 else 0.0
    log_p = 0.0 if hits <= 0 else float(_binom().logsf(hits - 1, n, gamma))
    return LevelScore(level=level, n_sentences=n, n_sem=n, n_syn=0, score=float(hits), expected=float(expected),
                      variance=float(variance), z=float(z), p_value=float(math.exp(log_p)),
                      log10_p=float(log_p / math.log(10)))
