"""backend/estimates/load.py: how the CPU's crowding slows a computation, and the conditions sampled."""
import pytest

from backend.estimates import load as load_module
from backend.estimates.load import CpuLoad, LoadDuring, current_load, slowdown


def test_an_idle_machine_costs_nothing_and_a_crowded_one_more_the_more_it_is_crowded():
    assert slowdown(CpuLoad(0.0, 0.0, 1, 2)) == 1.0 and slowdown(CpuLoad(0.0, 0.0, 2, 2)) == 1.0
    assert slowdown(CpuLoad(1.0, 0.0, 1, 2)) == 1.0  # one other session: a core to spare
    by_load = [slowdown(CpuLoad(groups, 0.0, 1, 2)) for groups in (2.0, 4.0, 6.0)]
    assert 1.0 < by_load[0] < by_load[1] < by_load[2]
    assert by_load[2] == pytest.approx(3.5)  # a seventh of 2 cores, against the one core it has alone


def test_a_lowered_priority_yields_to_its_own_group_only():
    assert slowdown(CpuLoad(0.0, 2.0, 1, 2, nice=10)) > 5 * slowdown(CpuLoad(0.0, 2.0, 1, 2, nice=0))
    assert slowdown(CpuLoad(2.0, 0.0, 1, 2, nice=10)) == slowdown(CpuLoad(2.0, 0.0, 1, 2, nice=0))


def test_more_threads_than_a_crowded_cpu_has_to_give_follow_the_fitted_exponent(monkeypatch):
    monkeypatch.setattr(load_module, "OVERSUBSCRIBED_EXPONENT", 2.0)
    assert slowdown(CpuLoad(3.0, 0.0, 2, 2)) == pytest.approx(4.0 ** 2)  # half a core each, against one
    assert slowdown(CpuLoad(3.0, 0.0, 1, 2)) == pytest.approx(2.0)  # one thread waits for no other


def test_the_conditions_sampled_now_and_over_a_stretch_of_work_are_counts_of_other_work():
    now = current_load(nice=3)
    assert now.groups >= 0 and now.same >= 0 and now.threads >= 1 and now.cores >= 1 and now.nice == 3
    with LoadDuring() as during:
        sum(i * i for i in range(200_000))
    assert during.cpu.load >= 0 and during.cpu.threads == now.threads
