import math

import numpy as np
import pytest

from backend.errors import UserError
from backend.fp8.concentration import concentration_curves


def test_rank_aware_tail_is_tighter_by_d_over_gamma_r():
    curves = concentration_curves(576, 64, gamma=2.0)
    assert curves.exponent_ratio == pytest.approx(576 / (2.0 * 64))
    assert curves.alpha_ratio == pytest.approx(math.sqrt(curves.exponent_ratio))
    assert (curves.log10_rank_aware <= curves.log10_rank_agnostic + 1e-12).all()
    assert curves.log10_rank_agnostic[0] == 0 and np.all(np.diff(curves.log10_rank_agnostic) < 0)
    i = np.searchsorted(curves.alpha, curves.alpha_rank_agnostic)
    assert curves.log10_rank_agnostic[i] == pytest.approx(-6.0, abs=0.2)


@pytest.mark.parametrize(("args", "message"), [((64, 128, 2.0), "r <= d"), ((64, 16, 1.0), "gamma"),
                                               ((64, 16, float("inf")), "gamma"), ((0, 0, 2.0), "r <= d")])
def test_bad_parameters(args, message):
    with pytest.raises(UserError, match=message):
        concentration_curves(*args)
