"""How long a verb's request will take on this machine now: its work (`backend.estimates.work`) times this
machine's seconds per unit of work for that verb and model on an idle CPU, times the slowdown of the current load
(`backend.estimates.load`).

The seconds per unit come from the store's timings of this verb on this model (each finished computed run is one:
`record_finished`), the median of the newest few, each brought back to an idle CPU with the load it ran under;
a verb that never ran here is calibrated instead: a short forward of the model timed here (once per store), times
the verb's declared probes per unit. Reference artifacts' compute times were measured on another machine and are
not used."""
from __future__ import annotations

import statistics
import threading
from dataclasses import dataclass
from typing import Any

from backend.estimates.calibrate import probe, probe_model
from backend.estimates.load import CpuLoad, cores, current_load, remember_share, slowdown
from backend.estimates.work import Work, work_of
from backend.store.db import StoreUnavailable, store_path
from backend.store.timings import PROBE, Timing, recent_timings, record_timing

RECENT_RUNS = 5  # the newest runs the rate is the median of: a machine's speed drifts (updates, other software)

# (feature, verb, model fingerprint) that finished a computed run in this process: their next runs are warm, with
# none of a first run's one-off costs (`Work.first_run_units`)
_WARM: set[tuple[str, str, str]] = set()


def request_units(verb, work: Work, subject: Any, config: Any, fingerprint: str) -> float:
    """The request's work (`work`: the verb's declared one) in its units, with the one-off costs of the verb's first
    run in this process when it has not run here yet (a first MT head map also imports captum and scipy and sets up
    its kernels)."""
    first = (verb.feature, verb.name, fingerprint) not in _WARM
    return float(work.units(subject, config)) + (work.first_run_units if first else 0.0)


@dataclass(frozen=True)
class Estimate:
    """seconds: the expected compute time now; basis: where the rate came from, in words; cpu: the conditions
    assumed (the current load); runs: the earlier runs here it is made from (0: calibrated with a probe)."""

    seconds: float
    basis: str
    cpu: CpuLoad
    runs: int = 0


def cpu_of(timing: Timing) -> CpuLoad:
    """The conditions a timing was measured under."""
    return CpuLoad(timing.share, timing.threads, timing.cores, timing.nice)


def idle_seconds_per_unit(timings: list[Timing]) -> float:
    """The median of the timings' seconds per unit of work, each brought back to an idle CPU."""
    return statistics.median(t.seconds / max(t.work, 1e-9)
                             / slowdown(cpu_of(t)) for t in timings)


def _calibrated(subject: Any, fingerprint: str, fresh: bool, nice: int) -> Timing | None:
    stored = recent_timings("", PROBE, fingerprint, limit=1)
    if stored or not fresh:
        return stored[0] if stored else None
    model = probe_model(subject)
    return None if model is None else probe(model, fingerprint, nice)


def estimate(verb, subject: Any, config: Any, nice: int | None = None, calibrate: bool = True) -> Estimate | None:
    """The expected seconds of `verb(subject, config)` computed now at `nice` (default: the calling thread's);
    None when the store is unavailable, or the verb never ran here and its model could not be probed.
    calibrate=False: never probe the model now (from inside a computation, whose model is busy), only use what
    the store has."""
    config = verb.config() if config is None else config
    now = current_load(nice)
    fingerprint = verb.ref(subject).fingerprint
    work = work_of(verb.feature, verb.name)
    units = request_units(verb, work, subject, config, fingerprint)
    try:
        runs = recent_timings(verb.feature, verb.name, fingerprint, limit=RECENT_RUNS)
        if runs:
            rate = idle_seconds_per_unit(runs)
            basis = f"from {len(runs)} earlier run{'s' if len(runs) > 1 else ''} on this model here"
        else:
            calibration = _calibrated(subject, fingerprint, calibrate, now.nice)
            if calibration is None:
                return None
            rate = idle_seconds_per_unit([calibration]) * work.probes_per_unit
            basis = "calibrated: a short forward of this model timed here"
    except StoreUnavailable:
        return None
    return Estimate(rate * units * slowdown(now), basis, now, len(runs))


def from_history(feature: str, action: str, fingerprint: str, nice: int | None = None) -> Estimate | None:
    """For work not declared as a verb (its size unknown): the median of its earlier runs on this model here,
    each brought back to an idle CPU, at the current load; None when it never ran here or without a store."""
    try:
        runs = recent_timings(feature, action, fingerprint, limit=RECENT_RUNS)
    except StoreUnavailable:
        return None
    if not runs:
        return None
    now = current_load(nice)
    idle = statistics.median(t.seconds / slowdown(cpu_of(t)) for t in runs)
    return Estimate(idle * slowdown(now), f"median of {len(runs)} earlier run{'s' if len(runs) > 1 else ''} on this "
                    "model here", now, len(runs))


def record_finished(verb, subject: Any, config: Any, seconds: float, nice: int, threads: int,
                    share: float | None = None) -> None:
    """A finished computed run of `verb` at `nice` with `threads` torch threads: its timing, for the next
    estimates, with the share of a core it got: `share`, measured by the run itself
    (`backend.estimates.load.own_share`), which the next estimates' expected share also takes in; or else the
    share measured now (the conditions it ended in, without its own work). Recorded in a thread of its own, so the
    run's result does not wait; best effort: the result is what matters."""
    fingerprint, path = verb.ref(subject).fingerprint, store_path()
    # a first run's rate counts its one-off costs
    units = request_units(verb, work_of(verb.feature, verb.name), subject, config, fingerprint)
    _WARM.add((verb.feature, verb.name, fingerprint))
    if share is not None:
        # No measurement of its own: a spinner started as the run ends would compete with the work that follows
        # it in this process (the next run of a batch), and measured half the share the runs got (bench/estimates.py)
        remember_share(nice, share)

    def record() -> None:
        if share is None:
            cpu = current_load(nice)
            got, n = cpu.share, cpu.cores
        else:
            got, n = share, cores()
        try:
            record_timing(Timing(verb.feature, verb.name, fingerprint, units, seconds, got, threads, n, nice), path)
        except StoreUnavailable:
            pass

    threading.Thread(target=record, name="record-timing", daemon=True).start()
