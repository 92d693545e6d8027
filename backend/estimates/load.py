"""The CPU conditions a computation runs under, and how much slower they make it than on an idle machine.

Counting the other runnable processes does not say it: whether Linux shares the CPU between sessions first
(autogroups), between containers (cgroups) or between threads, and how much a raised nice value (a page's long work
runs at one: app.ui.priority) costs beside them, differ from machine to machine. On this project's shared 2-core
machine at load ~35, a spinning thread got 0.16 of a core at nice 0, 0.067 at nice 10 and 0.021 at nice 19, where a
fair share of threads would give 0.057, 0.006 and 0.002. So the conditions are measured: `share` is the share of a
core that one thread spinning at the computation's nice value gets over SPIN_S (1: an idle core), measured in a
thread of its own and kept for FRESH_S. A computation of `threads` torch threads on C cores then has

    crowding = min(threads, C) / min(threads, C, threads * share)

and slowdown = crowding ** (1 if threads == 1 else OVERSUBSCRIBED_EXPONENT): torch's threads wait for each other at
every operation, so with more than one a crowded CPU can cost more than its share; bench/estimates.py fits the
exponent on this machine.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

import torch

SPIN_S = 0.2  # long enough for a few scheduler slices at a share of a few percent
FRESH_S = 5.0  # a measured share is reused this long (pages ask for estimates at every rerun)
OVERSUBSCRIBED_EXPONENT = 1.0  # bench/estimates.py fits it ("fitted_oversubscribed_exponent")


@dataclass(frozen=True)
class CpuLoad:
    """share: of a core, that one thread at `nice` gets now (1: idle); threads: torch's intra-op threads; cores: this
    process may use; nice: of the computing thread."""

    share: float
    threads: int
    cores: int
    nice: int = 0


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def crowding(cpu: CpuLoad) -> float:
    """The fair-share part of the slowdown (see the module docstring), >= 1."""
    threads, n = max(cpu.threads, 1), max(cpu.cores, 1)
    share = min(max(cpu.share, 1e-3), 1.0)
    return max(1.0, min(threads, n) / min(threads, n, threads * share))


def slowdown(cpu: CpuLoad) -> float:
    """How many times longer than on an idle machine a computation takes under `cpu` (>= 1)."""
    return crowding(cpu) ** (1.0 if max(cpu.threads, 1) == 1 else OVERSUBSCRIBED_EXPONENT)


def thread_nice() -> int:
    """The calling thread's nice value (Linux keeps one per thread; app.ui.priority raises it for long work)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except (AttributeError, OSError):
        return 0


def _spin(nice: int, out: list[float]) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass  # not Linux, or a nice this process may not take: measured at the thread's own
    wall, cpu = time.perf_counter(), time.thread_time()
    while time.perf_counter() - wall < SPIN_S:
        pass
    out.append((time.thread_time() - cpu) / (time.perf_counter() - wall))


def measure_share(nice: int) -> float:
    """The share of a core one thread at `nice` gets right now, measured over SPIN_S in a thread of its own."""
    out: list[float] = []
    spinner = threading.Thread(target=_spin, args=(nice, out), name="cpu-share", daemon=True)
    spinner.start()
    spinner.join()
    return min(out[0], 1.0) if out else 1.0


_measured: dict[int, tuple[float, float]] = {}  # nice -> (time.monotonic() measured, share)
_measured_lock = threading.Lock()


def current_load(nice: int | None = None) -> CpuLoad:
    """The conditions a computation started now at `nice` (default: the calling thread's) would run under."""
    nice = thread_nice() if nice is None else nice
    with _measured_lock:
        kept = _measured.get(nice)
    if kept is None or time.monotonic() - kept[0] > FRESH_S:
        kept = (time.monotonic(), measure_share(nice))
        with _measured_lock:
            _measured[nice] = kept
    return CpuLoad(kept[1], torch.get_num_threads(), cores(), nice)
