"""The CPU conditions a computation runs under, how many torch threads it should use under them, and how much
slower they make it than on an idle machine.

Counting the other runnable processes does not say how fast a thread runs: whether Linux shares the CPU between
sessions first (autogroups), between containers (cgroups) or between threads, and how much a raised nice value (a
page's long work runs at one: app.ui.priority) costs beside them, differ from machine to machine. On this project's
shared 2-core machine at load ~35, a spinning thread got 0.16 of a core at nice 0, 0.067 at nice 10 and 0.021 at
nice 19, where a fair share of threads would give 0.057, 0.006 and 0.002. So the conditions are measured: `share`
is the share of a core that one thread spinning at the computation's nice value gets over SPIN_S (1: an idle core),
measured in a thread of its own at most every FRESH_S and averaged over the last minute (`recent`); `others` is how
many other threads were runnable meanwhile (the kernel's count, /proc/loadavg), which says whether the cores beside
the spinner's are free. A computation of one torch thread measures the share it got itself (`own_share`: its
thread's CPU time over its wall time), so what it is recorded with is exact, not a snapshot.

Threads: torch's intra-op threads wait for each other at every operation, so on cores that other work also wants
they mostly wait. bench/threads_under_load.py (a page's priority, SmolLM2-135M, 2 cores shared with other work,
load 5-16): a 16-token forward took 4-10x longer with 2 threads than with 1, a greedy decode of 8 tokens 6-20x.
So a computation uses torch's threads only on cores that are free and stay free (`threads_for`: one core kept
spare), else one thread, whose speed follows its share of a core: slowdown = thread_cost * crowding, with

    crowding = min(threads, C) / min(threads, C, threads * share)      (C: the cores this process may use)

and thread_cost what fewer threads than the cores cost on an idle machine (ONE_THREAD_COST for one thread).
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch

SPIN_S = 0.2  # long enough for a few scheduler slices at a share of a few percent
# The first measurement, with none before it to average with, is longer: with 2 busy loops beside it on this 2-core
# machine a 0.2 s spin measured 0.85 of a core where the runs that followed got 0.58-0.77 (the scheduler moves
# three runnable threads between two cores at its own pace), and the estimate it made was 1.6x short
FIRST_SPIN_S = 0.6
SAMPLE_S = 0.02  # how often the spinner reads the kernel's count of runnable threads
FRESH_S = 5.0  # a measured share is reused this long (pages ask for estimates at every rerun)
WINDOW_S = 60.0  # the measurements an expected share is averaged over (`recent`)...
HALF_LIFE_S = 15.0  # ... each weighing half as much as one this much newer
FREE_SHARE = 0.9  # a spinner getting less than this is crowded: one torch thread
# 1 torch thread against 2 on free cores of this 2-core machine: the fastest of 15 turns each (load falling from 8.7
# to 5.8 as other work ended), the 16-token probe forward 0.123 s against 0.078 s (1.58x), a greedy decode of 8
# tokens 0.606 s against 0.362 s (1.67x)
ONE_THREAD_COST = 1.6
# Cores left to whatever starts during a run (another session's rerun, this app's own server threads): a torch
# thread that loses its core mid-run makes the others wait at every operation. bench/fit_probes.py on free cores
# chose 2 threads, then other work started: a greedy decode of 32 tokens took 34.7 s against 2.5-2.7 s with 1
# thread, an MT head map 35.7 s against 6.3-7.9 s; one thread on free cores costs only ONE_THREAD_COST.
SPARE_CORES = 1
DEFAULT_THREADS = torch.get_num_threads()  # the process's own, before any computation chose fewer
_LOADAVG = Path("/proc/loadavg")


@dataclass(frozen=True)
class CpuLoad:
    """share: of a core, that one thread at `nice` gets now (1: idle); threads: torch's intra-op threads; cores: this
    process may use; nice: of the computing thread; others: the other threads runnable beside it (0: unknown)."""

    share: float
    threads: int
    cores: int
    nice: int = 0
    others: float = 0.0


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def threads_for(share: float, others: float, available: int, default: int = DEFAULT_THREADS) -> int:
    """The torch threads a computation should use: one where even a single thread does not get its core; else the
    cores the other threads leave free, less SPARE_CORES, at most the default."""
    if share < FREE_SHARE:
        return 1
    free = math.floor(available - others + 0.5) - SPARE_CORES
    return max(1, min(default, free))


def crowding(cpu: CpuLoad) -> float:
    """The fair-share part of the slowdown (see the module docstring), >= 1."""
    threads, n = max(cpu.threads, 1), max(cpu.cores, 1)
    share = min(max(cpu.share, 1e-3), 1.0)
    return max(1.0, min(threads, n) / min(threads, n, threads * share))


def thread_cost(threads: int, available: int) -> float:
    """What `threads` torch threads cost against as many as the cores on an idle machine (>= 1)."""
    full = max(min(available, DEFAULT_THREADS), 1)
    if threads >= full or full == 1:
        return 1.0
    return (full / max(threads, 1)) ** math.log2(ONE_THREAD_COST)


def slowdown(cpu: CpuLoad) -> float:
    """How many times longer than on an idle machine with all its threads a computation takes under `cpu`."""
    return thread_cost(cpu.threads, cpu.cores) * crowding(cpu)


def own_share(cpu_seconds: float, wall_seconds: float, threads: int) -> float | None:
    """The share of a core a computation of `threads` torch threads got, from its thread's CPU time (time.thread_time)
    over its wall time; None with more than one thread (the others' time is not the thread's)."""
    if threads != 1 or wall_seconds <= 0:
        return None
    return min(max(cpu_seconds / wall_seconds, 1e-3), 1.0)


def thread_nice() -> int:
    """The calling thread's nice value (Linux keeps one per thread; app.ui.priority raises it for long work)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except (AttributeError, OSError):
        return 0


def _runnable() -> int | None:
    """The kernel's count of runnable threads now, the reader included (None: not Linux)."""
    try:
        return int(_LOADAVG.read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def _spin(nice: int, seconds: float, out: list[tuple[float, float]]) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        pass  # not Linux, or a nice this process may not take: measured at the thread's own
    wall, cpu = time.perf_counter(), time.thread_time()
    counts: list[int] = []
    next_sample = wall
    while (now := time.perf_counter()) - wall < seconds:
        if now >= next_sample:
            found = _runnable()
            if found is not None:
                counts.append(found - 1)  # the spinner itself is running
            next_sample = now + SAMPLE_S
    others = sum(counts) / len(counts) if counts else 0.0
    out.append(((time.thread_time() - cpu) / (time.perf_counter() - wall), max(others, 0.0)))


def measure(nice: int, seconds: float = SPIN_S) -> tuple[float, float]:
    """(the share of a core one thread at `nice` gets right now, the other threads runnable meanwhile), measured
    over `seconds` in a thread of its own."""
    out: list[tuple[float, float]] = []
    spinner = threading.Thread(target=_spin, args=(nice, seconds, out), name="cpu-share", daemon=True)
    spinner.start()
    spinner.join()
    return (min(out[0][0], 1.0), out[0][1]) if out else (1.0, 0.0)


def measure_share(nice: int) -> float:
    """The share of a core one thread at `nice` gets right now."""
    return measure(nice)[0]


_history: dict[int, list[tuple[float, float, float]]] = {}  # nice -> [(time.monotonic(), share, others)], oldest first
_history_lock = threading.Lock()


def recent(samples: list[tuple[float, float, float]], now: float) -> tuple[float, float]:
    """(share, others) expected over the next while: the samples of the last WINDOW_S, each weighted by its age
    (halved every HALF_LIFE_S). A mean, not the newest alone: a run's time follows the share it gets over its whole
    length, and one SPIN_S snapshot of a machine shared with bursty work (test suites) is not it: on this machine at
    load ~10 the snapshots before consecutive runs swung from 0.05 to 0.9 of a core."""
    weights = [0.5 ** ((now - t) / HALF_LIFE_S) for t, _, _ in samples]
    total = sum(weights)
    return (sum(w * share for w, (_, share, _) in zip(weights, samples)) / total,
            sum(w * others for w, (_, _, others) in zip(weights, samples)) / total)


def current_load(nice: int | None = None) -> CpuLoad:
    """The conditions a computation started now at `nice` (default: the calling thread's) would run under, with
    the torch threads it would use (`threads_for`): measured now unless measured in the last FRESH_S, averaged
    with the measurements before it (`recent`)."""
    nice = thread_nice() if nice is None else nice
    with _history_lock:
        samples = list(_history.get(nice, ()))
    now = time.monotonic()
    if not samples or now - samples[-1][0] > FRESH_S:
        alone = not any(now - sample[0] <= WINDOW_S for sample in samples)  # nothing to average it with
        samples.append((time.monotonic(), *measure(nice, FIRST_SPIN_S if alone else SPIN_S)))
        now = time.monotonic()
        samples = [sample for sample in samples if now - sample[0] <= WINDOW_S]
        with _history_lock:
            _history[nice] = samples
    share, others = recent(samples, now)
    n = cores()
    return CpuLoad(share, threads_for(share, others, n), n, nice, others)


def remember_share(nice: int, share: float) -> None:
    """A share of a core a computation at `nice` just got (measured by itself): one more sample for `recent`."""
    now = time.monotonic()
    with _history_lock:
        samples = [sample for sample in _history.get(nice, ()) if now - sample[0] <= WINDOW_S]
        samples.append((now, share, samples[-1][2] if samples else 0.0))
        _history[nice] = samples


def forget_load() -> None:
    """Drop every measurement kept: the next estimate starts from a measurement of its own (a bench's new load
    level, a test)."""
    with _history_lock:
        _history.clear()


@contextmanager
def computing_threads(cpu: CpuLoad) -> Iterator[int]:
    """Run the body with `cpu.threads` torch threads (yields the count used), then the calling thread's own again.
    Torch keeps the count per OS thread (OpenMP's, set when the thread first computes, from the process-wide
    value that torch.set_num_threads also sets), so a computation in one thread does not change another's already
    running; a thread the caller pinned to fewer threads (a bench) keeps its count."""
    before = torch.get_num_threads()
    used = min(before, max(cpu.threads, 1))
    if used != before:
        torch.set_num_threads(used)
    try:
        yield used
    finally:
        if used != before:
            torch.set_num_threads(before)
