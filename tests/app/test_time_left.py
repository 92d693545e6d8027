"""app/ui/run.py time_left: the stated estimate says the time left while little is done, the observed pace once
enough is."""
import pytest

from app.ui.run import PACE_TRUSTED_FROM, time_left, with_time_left


def test_before_any_progress_the_estimate_says_the_time_left():
    assert time_left(0.0, 0.5, estimate_s=120.0) == pytest.approx(120.0)
    assert time_left(0.0, 0.5) is None  # nothing to go on


def test_from_a_tenth_done_the_observed_pace_alone_says_it():
    # 20 % done in 100 s: 400 s left at this pace, whatever the estimate said
    assert time_left(0.2, 100.0, estimate_s=60.0) == pytest.approx(400.0)
    assert time_left(PACE_TRUSTED_FROM, 10.0, estimate_s=1000.0) == pytest.approx(90.0)


def test_in_between_the_two_are_blended():
    by_rate, paced = 300.0 * 0.95, 20.0 * 0.95 / 0.05
    blended = time_left(0.05, 20.0, estimate_s=300.0)
    assert min(by_rate, paced) < blended < max(by_rate, paced)


def test_the_progress_text_says_it():
    assert with_time_left("Generating", 0.0, 0.1, estimate_s=180.0) == "Generating · about 3 min left"
    assert with_time_left("Generating", 1.0, 50.0, estimate_s=180.0) == "Generating"
