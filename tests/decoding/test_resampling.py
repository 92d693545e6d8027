"""ESS and resampling on hand-worked examples."""
import math

import pytest
import torch

from backend.decoding.resampling import ess, multinomial, normalise, reset_weights, systematic, systematic_at


def _log(ws):
    return torch.log(torch.tensor(ws, dtype=torch.float64))


def test_ess_hand_examples():
    assert ess(torch.zeros(8)) == pytest.approx(8.0)
    assert ess(_log([1.0, 1e-300, 1e-300, 1e-300])) == pytest.approx(1.0)
    assert ess(_log([0.5, 0.5, 1e-300, 1e-300])) == pytest.approx(2.0)
    # w = (0.1, 0.2, 0.3, 0.4): 1 / (0.01 + 0.04 + 0.09 + 0.16) = 1 / 0.3
    assert ess(_log([1, 2, 3, 4])) == pytest.approx(1 / 0.3)
    assert ess(_log([1, 2, 3, 4]) + 1000.0) == pytest.approx(1 / 0.3)  # shift-invariant, no overflow


@pytest.mark.parametrize("weights, u, expected", [
    ([1, 2, 3, 4], 0.1, [0, 1, 2, 3]),  # points .025 .275 .525 .775 on CDF .1 .3 .6 1
    ([1, 2, 3, 4], 0.6, [1, 2, 3, 3]),  # points .15 .40 .65 .90
    ([7, 1, 1, 1], 0.5, [0, 0, 0, 2]),  # points .125 .375 .625 .875 on CDF .7 .8 .9 1
])
def test_systematic_hand_examples(weights, u, expected):
    assert systematic_at(_log(weights), u).tolist() == expected


def test_systematic_counts_are_floor_or_ceil_of_n_w():
    gen = torch.Generator().manual_seed(0)
    for _ in range(50):
        log_w = torch.randn(16, dtype=torch.float64, generator=gen) * 3
        idx = systematic(log_w, gen)
        counts = torch.bincount(idx, minlength=16).double()
        nw = 16 * normalise(log_w)
        assert idx.shape == (16,) and counts.sum() == 16
        assert torch.all(counts >= torch.floor(nw) - 1e-9) and torch.all(counts <= torch.ceil(nw) + 1e-9)


def test_degenerate_weights_resample_to_one_ancestor():
    log_w = torch.tensor([-math.inf, 0.0, -math.inf, -math.inf], dtype=torch.float64)
    gen = torch.Generator().manual_seed(3)
    assert systematic(log_w, gen).tolist() == [1, 1, 1, 1]
    assert multinomial(log_w, gen).tolist() == [1, 1, 1, 1]


def test_reset_keeps_the_evidence_estimate():
    log_w = _log([1, 2, 3, 4])
    reset = reset_weights(log_w)
    assert torch.allclose(reset, reset[0].expand(4))
    assert float(torch.logsumexp(reset, 0)) == pytest.approx(float(torch.logsumexp(log_w, 0)))
