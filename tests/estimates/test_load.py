"""backend/estimates/load.py: how the CPU's crowding slows a computation, the share of a core measured, and the
torch threads a computation uses under it."""
import threading

import pytest
import torch

from backend.estimates import load as load_module
from backend.estimates.load import (
    ONE_THREAD_COST,
    CpuLoad,
    computing_threads,
    current_load,
    measure,
    measure_share,
    slowdown,
    threads_for,
)


def test_an_idle_machine_costs_nothing_and_a_crowded_one_more_the_less_it_gives():
    assert slowdown(CpuLoad(1.0, 2, 2)) == 1.0
    by_share = [slowdown(CpuLoad(share, 1, 2)) / slowdown(CpuLoad(1.0, 1, 2)) for share in (0.5, 0.25, 0.1)]
    assert by_share == pytest.approx([2.0, 4.0, 10.0])
    assert slowdown(CpuLoad(0.5, 2, 2)) == pytest.approx(2.0)  # two threads at half a core each, against two cores
    assert slowdown(CpuLoad(0.5, 2, 4)) == pytest.approx(2.0)  # ... against the two cores they have alone


def test_one_thread_on_free_cores_costs_what_it_was_measured_to(monkeypatch):
    monkeypatch.setattr(load_module, "DEFAULT_THREADS", 2)
    assert slowdown(CpuLoad(1.0, 1, 2)) == pytest.approx(ONE_THREAD_COST)
    assert slowdown(CpuLoad(0.25, 1, 2)) == pytest.approx(4 * ONE_THREAD_COST)
    assert slowdown(CpuLoad(1.0, 1, 1)) == 1.0  # one core: one thread is all there is


def test_crowded_cores_get_one_torch_thread_and_free_ones_all_but_a_spare_one():
    assert threads_for(1.0, 0.0, available=8, default=8) == 7
    assert threads_for(1.0, 0.0, available=2, default=2) == 1  # two cores: one kept for what starts meanwhile
    assert threads_for(0.5, 0.0, available=8, default=8) == 1  # even one thread does not get its core
    assert threads_for(0.95, 0.3, available=8, default=8) == 7  # the others mostly asleep
    assert threads_for(1.0, 3.0, available=16, default=16) == 12  # those the others leave free, less the spare
    assert threads_for(1.0, 0.0, available=16, default=4) == 4  # never more than torch's own


def test_the_share_of_a_core_is_measured_at_the_nice_asked_and_kept_a_while():
    assert 0 < measure_share(0) <= 1.0
    share, others = measure(0)
    assert 0 < share <= 1.0 and others >= 0
    now = current_load(nice=3)
    assert 0 < now.share <= 1.0 and now.threads >= 1 and now.cores >= 1 and now.nice == 3


def test_a_fresh_measurement_is_reused_and_older_ones_weigh_in_less_the_older_they_are(monkeypatch):
    measured = []
    monkeypatch.setattr(load_module, "_history", {})
    monkeypatch.setattr(load_module, "measure", lambda nice, seconds: measured.append((nice, seconds)) or (0.5, 0.0))
    current_load(nice=7)
    current_load(nice=7)
    assert measured == [(7, load_module.FIRST_SPIN_S)]  # measured once, reused while fresh; longer, being alone
    monkeypatch.setattr(load_module, "FRESH_S", -1.0)  # stale at once: measured again, averaged with the first
    current_load(nice=7)
    assert measured[1:] == [(7, load_module.SPIN_S)] and load_module.SPIN_S < load_module.FIRST_SPIN_S
    now = 1000.0
    assert load_module.recent([(now - 1, 0.8, 2.0)], now) == pytest.approx((0.8, 2.0))
    half_life = load_module.HALF_LIFE_S
    # a sample one half-life older weighs half: (0.2 * 0.5 + 0.8) / 1.5
    assert load_module.recent([(now - half_life, 0.2, 0.0), (now, 0.8, 0.0)], now)[0] == pytest.approx(0.6)


def test_a_one_thread_run_knows_the_share_it_got_from_its_own_cpu_time():
    assert load_module.own_share(0.5, 2.0, threads=1) == pytest.approx(0.25)
    assert load_module.own_share(2.1, 2.0, threads=1) == 1.0
    assert load_module.own_share(0.5, 2.0, threads=2) is None  # the other threads' time is not the caller's


def test_the_threads_of_the_load_are_chosen_from_what_was_measured(monkeypatch):
    monkeypatch.setattr(load_module, "_history", {})
    monkeypatch.setattr(load_module, "measure", lambda nice, seconds: (0.3, 4.0))
    assert current_load(nice=5).threads == 1


def _in_new_thread(body):
    out = {}
    worker = threading.Thread(target=lambda: out.update(value=body()))
    worker.start()
    worker.join()
    return out["value"]


def test_a_computation_runs_with_the_threads_chosen_and_the_thread_keeps_its_own_after():
    def body():
        torch.set_num_threads(2)
        with computing_threads(CpuLoad(0.2, 1, 2)) as used:
            inside = torch.get_num_threads()
        return used, inside, torch.get_num_threads()

    assert _in_new_thread(body) == (1, 1, 2)


def test_a_thread_pinned_to_fewer_threads_keeps_them():
    def body():
        torch.set_num_threads(1)
        with computing_threads(CpuLoad(1.0, 2, 2)) as used:
            inside = torch.get_num_threads()
        return used, inside

    assert _in_new_thread(body) == (1, 1)


def test_a_share_a_computation_measured_itself_counts_as_a_fresh_measurement(monkeypatch):
    measured = []
    monkeypatch.setattr(load_module, "_history", {})
    monkeypatch.setattr(load_module, "measure", lambda nice, seconds: measured.append(nice) or (0.9, 2.0))
    current_load(nice=4)
    load_module.remember_share(4, 0.3)
    now = current_load(nice=4)
    assert measured == [4] and 0.3 < now.share < 0.9 and now.others == pytest.approx(2.0)
