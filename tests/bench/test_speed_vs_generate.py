"""Pieces of the race against transformers.generate (bench/speed_vs_generate.py) that its figures rest on."""
from bench.speed_vs_generate import first_divergence


def test_first_divergence_is_where_two_runs_part():
    assert first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert first_divergence([1, 2, 4], [1, 2, 3]) == 2
    assert first_divergence([1, 2], [1, 2, 3]) == 2  # one stopped early: the rest of the other is not its text
    assert first_divergence([], [7]) == 0
