"""backend/estimates/load.py: how the CPU's crowding slows a computation, and the share of a core measured."""
import pytest

from backend.estimates import load as load_module
from backend.estimates.load import CpuLoad, current_load, measure_share, slowdown


def test_an_idle_machine_costs_nothing_and_a_crowded_one_more_the_less_it_gives():
    assert slowdown(CpuLoad(1.0, 1, 2)) == 1.0 and slowdown(CpuLoad(1.0, 2, 2)) == 1.0
    by_share = [slowdown(CpuLoad(share, 1, 2)) for share in (0.5, 0.25, 0.1)]
    assert by_share == pytest.approx([2.0, 4.0, 10.0])
    assert slowdown(CpuLoad(0.5, 2, 2)) == pytest.approx(2.0)  # two threads at half a core each, against two cores
    assert slowdown(CpuLoad(0.5, 2, 4)) == pytest.approx(2.0)  # ... against the two cores they have alone


def test_more_threads_than_a_crowded_cpu_has_to_give_follow_the_fitted_exponent(monkeypatch):
    monkeypatch.setattr(load_module, "OVERSUBSCRIBED_EXPONENT", 2.0)
    assert slowdown(CpuLoad(0.25, 2, 2)) == pytest.approx(4.0 ** 2)
    assert slowdown(CpuLoad(0.25, 1, 2)) == pytest.approx(4.0)  # one thread waits for no other


def test_the_share_of_a_core_is_measured_at_the_nice_asked_and_kept_a_while():
    assert 0 < measure_share(0) <= 1.0
    now = current_load(nice=3)
    assert 0 < now.share <= 1.0 and now.threads >= 1 and now.cores >= 1 and now.nice == 3
    assert current_load(nice=3).share == now.share  # measured once, reused while fresh
