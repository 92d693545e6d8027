"""The gate rule, its early-step rules and the calibration of tau and lambda."""
import numpy as np
import pytest

from backend.disagreement.gate import Threshold, calibrate, gate
from backend.disagreement.policies import earliest_positions, random_positions

T = Threshold(budget=0.1, tau=1.0, lam=2.0)


def test_gate_needs_both_the_threshold_and_a_local_spike():
    history = [0.5, 0.5, 0.5, 0.5]
    assert gate(1.5, history, T, window=4)  # > tau and > 2 * 0.5
    assert not gate(0.9, history, T, window=4)  # under tau
    assert not gate(1.5, [1.0, 1.0, 1.0, 1.0], T, window=4)  # above tau but not above 2 * mean = 2
    assert gate(1.5, [9.0, 0.5, 0.5, 0.5, 0.5], T, window=4)  # only the last W values count


def test_early_steps_follow_the_named_rule():
    assert gate(1.5, [], T, window=4, early="partial")  # t = 0: the threshold alone
    assert not gate(1.5, [1.0], T, window=4, early="partial")  # t = 1: mean of the one value -> 2.0
    assert gate(1.5, [1.0], T, window=4, early="threshold")
    assert not gate(1.5, [], T, window=4, early="never")
    assert not gate(0.5, [], T, window=4, early="threshold")


def test_window_zero_is_the_threshold_alone():
    assert gate(1.5, [1.0, 1.0, 1.0], T, window=0)  # would fail the spike rule (2 * 1.0 > 1.5)
    assert not gate(0.5, [], T, window=0)


def test_never_and_always():
    assert not gate(1e9, [], Threshold.never(), window=4)
    assert gate(-1.0, [5.0] * 10, Threshold.always(), window=4)


def test_calibration_quantile_and_lambda():
    values = np.arange(1, 101, dtype=float)  # 1..100
    t = calibrate(values, 0.10)
    assert t.tau == pytest.approx(np.quantile(values, 0.9))
    assert t.lam == pytest.approx(values[values > t.tau].mean() / values.mean())
    assert (values > t.tau).mean() == pytest.approx(0.10)
    assert calibrate(values, 0.0) == Threshold.never()


def test_control_positions():
    rng = np.random.default_rng(0)
    assert earliest_positions(3, 10) == frozenset({0, 1, 2})
    assert earliest_positions(5, 2) == frozenset({0, 1})
    random = random_positions(3, 10, rng)
    assert len(random) == 3 and all(0 <= p < 10 for p in random)
    assert random_positions(5, 2, rng) == frozenset({0, 1})  # never more than the length
    assert random_positions(0, 10, rng) == frozenset()


def test_decisive_calibration_counts_only_positions_where_the_tokens_differ():
    rng = np.random.default_rng(0)
    values = rng.exponential(1.0, 10_000)
    differs = rng.random(10_000) < 0.3
    t = calibrate(values, 0.1, differs)
    fired = (values > t.tau) & differs
    assert abs(fired.mean() - 0.1) < 0.002, "eligible and above tau: a share r of all tokens"
    assert t.tau < calibrate(values, 0.1).tau, "fewer eligible positions: a lower threshold for the same budget"
    every = calibrate(values, 0.5, differs)  # r above the eligible share (30%): every eligible position fires
    assert ((values > every.tau) & differs).sum() == differs.sum() and np.isfinite(every.tau)
    assert not every.is_always, "not the 'every step' gate: the agreeing steps stay with the base"
    assert calibrate(values, 0.1, np.zeros(10_000, bool)).tau == float("inf")
