"""Wilson intervals and the exact McNemar test, against values worked out by hand."""
import math

import pytest

from backend.significance import discordant, mcnemar_exact, wilson_interval


def test_wilson_matches_the_closed_form_and_stays_inside_zero_one():
    low, high = wilson_interval(16, 50)
    assert (round(low, 4), round(high, 4)) == (0.2076, 0.4581)  # (0.358416 -+ 0.134887) / 1.076832
    assert wilson_interval(0, 50)[0] == 0.0 and 0.05 < wilson_interval(0, 50)[1] < 0.08
    assert wilson_interval(50, 50)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_narrows_with_more_problems():
    assert wilson_interval(160, 500)[1] - wilson_interval(160, 500)[0] < wilson_interval(16, 50)[1] - wilson_interval(16, 50)[0]


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError):
        wilson_interval(6, 5)


def test_mcnemar_exact_is_the_two_sided_binomial_tail():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)
    assert mcnemar_exact(9, 3) == pytest.approx(2 * sum(math.comb(12, k) for k in range(4)) / 2 ** 12)
    assert mcnemar_exact(3, 9) == mcnemar_exact(9, 3)
    assert mcnemar_exact(4, 4) == 1.0


def test_discordant_counts_only_the_problems_both_scored():
    a = {"p1": True, "p2": True, "p3": False, "p4": True}
    b = {"p1": False, "p2": True, "p3": True, "p5": False}  # p4 and p5 are scored by one side only
    assert discordant(a, b) == (1, 1) and discordant(b, a) == (1, 1)
    assert discordant({"p1": True, "p2": True}, {"p1": False, "p2": False}) == (2, 0)
