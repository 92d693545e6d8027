"""backend/estimates: a verb's estimate scales with its request's work and the load, is calibrated with a probe
forward before the verb ever ran here (never read from another machine's reference rows), and follows each
finished run."""
from dataclasses import dataclass

import pytest

from backend.estimates import expected as estimate_module
from backend.estimates import estimate
from backend.estimates.expected import cpu_of
from backend.estimates.load import CpuLoad, slowdown
from backend.estimates.work import declare_work
from backend.store.db import connect
from backend.store.timings import PROBE, Timing, recent_timings, record_timing
from backend.verbs import Verb
from tests.support.waiting import wait_until


@dataclass(frozen=True)
class Count:
    n: int = 10


def count_up(subject, config: Count, progress):
    return sum(range(config.n))


def units_of(subject, config: Count) -> float:
    return float(config.n)


COUNT = Verb("estimates-demo", "count", Count, count_up, "counts up")
declare_work("estimates-demo", "count", units_of, probes_per_unit=3.0)


@pytest.fixture
def handle():
    from backend.models import load

    return load("tiny-llama")


@pytest.fixture
def at_load(monkeypatch):
    """Pretend one thread gets `share` of a core now (1: idle), one torch thread on one core (so one thread costs
    nothing beside the threads torch has)."""
    def set_share(share: float) -> None:
        monkeypatch.setattr(estimate_module, "current_load", lambda nice=None: CpuLoad(share, 1, 1, 0))
    set_share(1.0)
    return set_share


def _earlier_run(handle, work: float, seconds: float, share: float = 1.0) -> None:
    record_timing(Timing("estimates-demo", "count", handle.fingerprint, work, seconds, share, 1, 1, 0))


def test_the_estimate_scales_with_the_work_of_the_request(fresh_store, handle, at_load):
    _earlier_run(handle, work=10, seconds=5.0)
    assert estimate(COUNT, handle, Count(10)).seconds == pytest.approx(5.0)
    assert estimate(COUNT, handle, Count(40)).seconds == pytest.approx(20.0)


def test_the_estimate_scales_with_the_load_now_and_the_load_a_run_had(fresh_store, handle, at_load):
    _earlier_run(handle, work=10, seconds=5.0, share=0.25)  # a run on a crowded machine: 4x an idle one's time
    assert estimate(COUNT, handle, Count(10)).seconds == pytest.approx(1.25)
    at_load(0.5)
    assert estimate(COUNT, handle, Count(10)).seconds == pytest.approx(2.5)


def test_a_finished_run_is_recorded_and_updates_the_estimate(fresh_store, handle, at_load):
    before = estimate(COUNT, handle, Count(1000))
    assert before.runs == 0
    done = COUNT(handle, Count(1000))
    [timing] = wait_until(lambda: recent_timings("estimates-demo", "count", handle.fingerprint), 60,
                          "the finished run's timing")
    # the computation's own time (the run's also holds the recording of it)
    assert timing.work == 1000 and 0 < timing.seconds <= done.seconds and timing.threads >= 1
    after = estimate(COUNT, handle, Count(2000))
    assert after.runs == 1 and "1 earlier run" in after.basis
    assert after.seconds == pytest.approx(2 * timing.seconds / slowdown(cpu_of(timing)))
    assert COUNT(handle, Count(1000)).cached  # served from the store: nothing computed, no new timing
    COUNT(handle, Count(3))  # computed: its timing comes after the first one's
    wait_until(lambda: len(recent_timings("estimates-demo", "count", handle.fingerprint)) == 2, 60, "two timings")
    assert [t.work for t in recent_timings("estimates-demo", "count", handle.fingerprint)] == [3, 1000]


def test_a_verb_never_run_here_is_calibrated_with_a_probe_not_with_reference_rows(fresh_store, handle, at_load):
    with connect() as con:  # a shipped reference row: another machine's compute time for this very verb and model
        con.execute("INSERT INTO artifacts (key, feature, action, fingerprint, params, code_version, payload, "
                    "compute_seconds, origin) VALUES ('ref', 'estimates-demo', 'count', ?, '{}', '0', 'null', 9999, "
                    "'reference')", [handle.fingerprint])
    first = estimate(COUNT, handle, Count(10))
    assert first is not None and first.runs == 0 and first.basis.startswith("calibrated")
    [probe] = recent_timings("", PROBE, handle.fingerprint)
    idle_probe = probe.seconds / slowdown(cpu_of(probe))
    assert first.seconds == pytest.approx(idle_probe * 3.0 * 10)  # probe x probes per unit x units, idle now
    assert estimate(COUNT, handle, Count(20)).seconds == pytest.approx(2 * first.seconds)  # the stored probe again
    assert len(recent_timings("", PROBE, handle.fingerprint)) == 1


def test_without_a_model_to_probe_a_never_run_verb_has_no_estimate(fresh_store, at_load):
    from backend.store.artifacts import ModelRef

    assert estimate(COUNT, ModelRef("a pair of nothing", "f00d"), Count(10)) is None


def test_a_verb_computes_with_one_torch_thread_on_crowded_cores_and_records_it(fresh_store, handle, monkeypatch):
    import torch

    from backend import verbs

    seen: list[int] = []

    def threads_seen(subject, config: Count, progress):
        seen.append(torch.get_num_threads())
        return config.n

    watched = Verb("estimates-demo", "threads", Count, threads_seen, "sees its torch threads")
    monkeypatch.setattr(verbs, "current_load", lambda nice=None: CpuLoad(0.2, 1, 2, 0, 3.0))  # crowded cores
    before = torch.get_num_threads()
    watched(handle, Count(7))
    assert seen == [1] and torch.get_num_threads() == before  # the caller's own count again after
    [timing] = wait_until(lambda: recent_timings("estimates-demo", "threads", handle.fingerprint), 60,
                          "the finished run's timing")
    assert timing.threads == 1


def test_a_run_on_free_cores_with_two_threads_predicts_one_thread_on_crowded_ones(fresh_store, handle, monkeypatch):
    from backend.estimates import load as load_module

    monkeypatch.setattr(load_module, "DEFAULT_THREADS", 2)
    record_timing(Timing("estimates-demo", "count", handle.fingerprint, 10, 5.0, 1.0, 2, 2, 0))  # idle, 2 threads
    monkeypatch.setattr(estimate_module, "current_load", lambda nice=None: CpuLoad(0.25, 1, 2, 0, 3.0))
    crowded = estimate(COUNT, handle, Count(10))
    assert crowded.seconds == pytest.approx(5.0 * load_module.ONE_THREAD_COST * 4)  # one thread, a quarter core


WARMING = Verb("estimates-demo", "warming", Count, count_up, "counts up, with one-off costs on its first run")
declare_work("estimates-demo", "warming", units_of, probes_per_unit=3.0, first_run_units=5.0)


def test_a_verbs_first_run_in_the_process_counts_its_one_off_costs_and_later_runs_do_not(fresh_store, handle, at_load,
                                                                                        monkeypatch):
    monkeypatch.setattr(estimate_module, "_WARM", set())  # this process has not run it yet
    # another process's warm run: 0.5 s a unit
    record_timing(Timing("estimates-demo", "warming", handle.fingerprint, 10, 5.0, 1.0, 1, 1, 0))
    assert estimate(WARMING, handle, Count(10)).seconds == pytest.approx(0.5 * (10 + 5))
    WARMING(handle, Count(1000))  # the first run here: its timing counts the one-off costs as work done
    wait_until(lambda: len(recent_timings("estimates-demo", "warming", handle.fingerprint)) == 2, 60,
               "the first run's timing")
    assert recent_timings("estimates-demo", "warming", handle.fingerprint)[0].work == 1000 + 5
    warm = estimate(WARMING, handle, Count(10))
    both = recent_timings("estimates-demo", "warming", handle.fingerprint)
    assert warm.seconds == pytest.approx(10 * estimate_module.idle_seconds_per_unit(both))  # no one-off costs now
