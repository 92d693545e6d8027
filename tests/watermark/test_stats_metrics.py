import itertools
import math

import pytest
from scipy.stats import binom

from backend.watermark.metrics import roc_auc, roc_curve, threshold_at_fpr, tpr_at_fpr
from backend.watermark.stats import binomial_score, level_score, log_sf_weighted


@pytest.mark.parametrize("n_sem,n_syn,w_sem,w_syn", [(3, 4, 0.7, 0.3), (5, 5, 0.5, 0.5), (0, 6, 0.5, 0.5),
                                                     (4, 0, 1.0, 0.0), (6, 2, 0.25, 0.75)])
def test_exact_pvalue_matches_brute_force(n_sem, n_syn, w_sem, w_syn):
    for score in [0.0, 0.3, 1.0, 1.7, 2.5, 3.0, 100.0]:
        brute = sum(binom.pmf(x, n_sem, .5) * binom.pmf(y, n_syn, .5)
                    for x, y in itertools.product(range(n_sem + 1), range(n_syn + 1))
                    if w_sem * x + w_syn * y >= score - 1e-9)
        assert math.exp(log_sf_weighted(score, n_sem, n_syn, w_sem, w_syn)) == pytest.approx(brute, abs=1e-12)


def test_level_score_uses_the_variance_of_the_weighted_score():
    s = level_score("model", 5, [1] * 5, [1] * 5, 0.5, 0.5)
    assert s.variance == pytest.approx(10 * 0.25 / 4)  # 0.125 per sentence, not IPMark's 0.25
    assert s.z == pytest.approx((5 - 2.5) / math.sqrt(0.625))
    assert s.p_value == pytest.approx(2 ** -10)
    empty = level_score("user", 0, [], [], 0.5, 0.5)
    assert (empty.z, empty.p_value) == (0.0, 1.0)


def test_binomial_score():
    s = binomial_score("tokens", 10, 20, 0.25)
    assert s.z == pytest.approx((10 - 5) / math.sqrt(20 * 0.25 * 0.75))
    assert s.p_value == pytest.approx(binom.sf(9, 20, 0.25))


def test_roc_metrics():
    assert roc_auc([3, 4, 5], [0, 1, 2]) == 1.0
    assert roc_auc([1, 1], [1, 1]) == 0.5
    neg = list(range(100))
    assert threshold_at_fpr(neg, 0.01) == 98 and threshold_at_fpr(neg, 0.0) == 99
    assert tpr_at_fpr([99.5, 98.5, 50], neg, 0.01) == pytest.approx(2 / 3)
    fpr, tpr = roc_curve([2, 3], [0, 1])
    assert fpr[0] == 0 and tpr[-1] == 1 and fpr[-1] == 1
