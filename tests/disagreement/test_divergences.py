"""Divergences, concentration statistics, AUROC and EOPD terms against hand computations."""
import math

import numpy as np
import pytest
import torch

from backend.disagreement.concentration import gini, lorenz, share_in_top, share_of_tokens_for
from backend.disagreement.divergences import SIGNALS, signal_value, token_divergences
from backend.disagreement.eopd import EopdParams, eopd_signals
from backend.disagreement.failure import auroc

P = [0.5, 0.25, 0.25, 0.0]
Q = [0.25, 0.25, 0.25, 0.25]


def _logp(*rows):
    return torch.tensor(rows, dtype=torch.float32).log()


def test_divergences_equal_hand_computations():
    d = token_divergences(_logp(P), _logp(Q))
    h_p = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    ce = -(0.5 + 0.25 + 0.25) * math.log(0.25)
    kl_pq = 0.5 * math.log(0.5 / 0.25)  # the 0.25/0.25 terms vanish, the zero term counts 0
    kl_qp = math.inf  # Q puts mass where P has none
    m = [(p + q) / 2 for p, q in zip(P, Q)]
    js = 0.5 * sum(p * math.log(p / mm) for p, mm in zip(P, m) if p) + \
        0.5 * sum(q * math.log(q / mm) for q, mm in zip(Q, m) if q)
    assert d["entropy_base"].item() == pytest.approx(h_p, abs=1e-6)
    assert d["entropy_reason"].item() == pytest.approx(math.log(4), abs=1e-6)
    assert d["ce"].item() == pytest.approx(ce, abs=1e-6)
    assert d["kl_base_reason"].item() == pytest.approx(kl_pq, abs=1e-6)
    assert d["kl_reason_base"].item() == kl_qp
    assert d["js"].item() == pytest.approx(js, abs=1e-6)
    assert d["js"].item() <= math.log(2)


def test_divergences_of_identical_distributions_are_zero_and_rows_are_independent():
    a = [0.7, 0.2, 0.1, 0.0]
    d = token_divergences(_logp(a, P), _logp(a, Q))
    assert d["kl_base_reason"][0].item() == pytest.approx(0, abs=1e-6)
    assert d["js"][0].item() == pytest.approx(0, abs=1e-6)
    assert d["ce"][0].item() == pytest.approx(d["entropy_base"][0].item(), abs=1e-6)
    assert d["kl_base_reason"][1].item() == pytest.approx(0.5 * math.log(2), abs=1e-6)
    assert signal_value("ce", _logp(P), _logp(Q)).item() == pytest.approx(d["ce"][1].item(), abs=1e-6)
    assert signal_value("entropy_base", _logp(P), None).item() == pytest.approx(d["entropy_base"][1].item())


def test_gini_lorenz_and_shares_on_known_vectors():
    assert gini(np.ones(10)) == pytest.approx(0.0)
    one_hot = np.zeros(10)
    one_hot[3] = 5.0
    assert gini(one_hot) == pytest.approx(0.9)  # (n - 1) / n for a single carrier
    assert gini(np.array([1.0, 2.0, 3.0, 4.0])) == pytest.approx(0.25)  # sum|xi-xj| / (2 n^2 mean)
    x, y = lorenz(np.array([1.0, 1.0, 2.0]), points=4)
    assert np.allclose(x, [0, 1 / 3, 2 / 3, 1]) and np.allclose(y, [0, 0.25, 0.5, 1.0])
    values = np.array([8.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert share_of_tokens_for(values, 0.5) == pytest.approx(0.1)
    assert share_of_tokens_for(values, 0.8) == pytest.approx(0.1)  # 8 of 10 reaches exactly 80%
    assert share_of_tokens_for(values, 0.85) == pytest.approx(0.2)
    assert share_in_top(values, 0.10) == pytest.approx(0.8)


def test_auroc_matches_pair_counting():
    scores = np.array([0.9, 0.8, 0.3, 0.3, 0.1])
    wrong = np.array([True, False, True, False, False])
    # wrong: 0.9, 0.3; right: 0.8, 0.3, 0.1 -> pairs won: 0.9>all (3), 0.3 ties 0.3 (0.5), beats 0.1 (1)
    assert auroc(scores, wrong) == pytest.approx(4.5 / 6)
    assert math.isnan(auroc(scores, np.zeros(5, dtype=bool)))


def test_eopd_terms_equal_hand_computations():
    t, s = [0.6, 0.3, 0.05, 0.05], [0.4, 0.4, 0.1, 0.1]
    out = eopd_signals(_logp(s), _logp(t), torch.tensor([1]), EopdParams(tau=0.8, top_k=2, alpha=0.5))
    h_t = -sum(p * math.log(p) for p in t)
    assert h_t >= 0.8 and out["gate"][0] == 1.0
    assert out["teacher_entropy"][0] == pytest.approx(h_t, abs=1e-6)
    k1 = math.log(0.4) - math.log(0.3)
    assert out["reverse_kl_k1"][0] == pytest.approx(k1, abs=1e-6)
    assert out["reverse_kl"][0] == pytest.approx(sum(a * math.log(a / b) for a, b in zip(s, t)), abs=1e-6)
    fkl = (2 / 3) * math.log((2 / 3) / 0.4) + (1 / 3) * math.log((1 / 3) / 0.4)  # teacher's top 2, renormalised
    assert out["forward_kl_topk"][0] == pytest.approx(fkl, abs=1e-6)
    assert out["eopd_term"][0] == pytest.approx(k1 + 0.5 * fkl, abs=1e-6)
    assert out["plain_term"][0] == pytest.approx(k1, abs=1e-6)
    calm = eopd_signals(_logp(s), _logp([0.97, 0.01, 0.01, 0.01]), torch.tensor([0]), EopdParams())
    assert calm["gate"][0] == 0.0 and calm["eopd_term"][0] == pytest.approx(calm["plain_term"][0])


@pytest.mark.parametrize("name", SIGNALS.names())
def test_every_signal_contract(name):
    """[T] finite and non-negative on random distributions; a divergence is smallest between equal distributions
    (Gibbs: KL, JS reach 0 there, CE reaches H(base)); only a signal that does not need the reasoning model works
    without it."""
    signal = SIGNALS.get(name)
    gen = torch.Generator().manual_seed(0)
    base, reason = (torch.log_softmax(torch.randn(5, 11, generator=gen) * 3, -1) for _ in range(2))
    values = signal_value(name, base, reason)
    assert values.shape == (5,) and torch.isfinite(values).all() and (values >= 0).all()
    if signal.divergence:
        same = signal_value(name, base, base)
        assert (same < values).all()
        expected = torch.zeros(5) if name != "ce" else signal_value("entropy_base", base, None)
        assert torch.allclose(same, expected, atol=1e-5)
    if signal.needs_reasoning:
        with pytest.raises(ValueError):
            signal_value(name, base, None)
    else:
        assert torch.equal(signal_value(name, base, None), values)
