"""The CPU conditions a computation runs under, and how much slower they make it than on an idle machine.

Linux shares the CPU fairly between scheduling groups first, then between the threads inside a group by their
nice values. With autogroups on (the default of most distributions) every session is a group: the other jobs of a
shared machine (another user's script, another server) are groups of their own, while the threads of this process
and of anything started from the same session compete inside one group, where a page's computation, run at a
raised nice value (app.ui.priority), yields to them almost entirely. So the conditions are counted in two parts,
by one daemon thread every SAMPLE_S and smoothed over about SMOOTHING_S (os.getloadavg's one minute lags a load
that just started by most of a minute):

- groups: the other sessions with a runnable process (without autogroups: 0);
- same: the other runnable processes of this process's own session (without autogroups: every other one).

The computation's `threads` get C / (groups + 1) cores as a group, and inside it the share of their scheduler
weight (w: 1024 at nice 0, 1.25x less per nice step) beside `same` threads at nice 0:

    cores = min(threads, C / (groups + 1) * threads * w / (threads * w + same * 1024))
    crowding = min(threads, C) / cores

and slowdown = crowding ** (1 if threads == 1 else OVERSUBSCRIBED_EXPONENT): torch's threads wait for each other
at every operation, so with more than one a crowded CPU can cost more than its share; bench/estimates.py fits the
exponent on this machine. Elsewhere than Linux, os.getloadavg counts as `same` other processes.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import torch

SAMPLE_S = 1.0
SMOOTHING_S = 8.0  # the time constant of the smoothed counts
NICE_0_WEIGHT = 1024.0
NICE_STEP_RATIO = 1.25  # each nice step divides a thread's scheduler weight by about this (sched_prio_to_weight)
OVERSUBSCRIBED_EXPONENT = 1.0  # bench/estimates.py fits it ("fitted_oversubscribed_exponent")


@dataclass(frozen=True)
class CpuLoad:
    """groups: other scheduling groups with runnable work; same: other runnable processes in this process's
    group; threads: torch's intra-op threads; cores: this process may use; nice: of the computing thread."""

    groups: float
    same: float
    threads: int
    cores: int
    nice: int = 0

    @property
    def load(self) -> float:
        """Other runnable work, in words for people: the groups and the same-group processes together."""
        return self.groups + self.same


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def crowding(cpu: CpuLoad) -> float:
    """The fair-share part of the slowdown (see the module docstring), >= 1."""
    threads, n = max(cpu.threads, 1), max(cpu.cores, 1)
    weight = NICE_0_WEIGHT / NICE_STEP_RATIO ** cpu.nice
    inside = threads * weight / (threads * weight + max(cpu.same, 0.0) * NICE_0_WEIGHT)
    ours = min(threads, n / (max(cpu.groups, 0.0) + 1) * inside)
    return max(1.0, min(threads, n) / ours)


def slowdown(cpu: CpuLoad) -> float:
    """How many times longer than on an idle machine a computation takes under `cpu` (>= 1)."""
    return crowding(cpu) ** (1.0 if max(cpu.threads, 1) == 1 else OVERSUBSCRIBED_EXPONENT)


def thread_nice() -> int:
    """The calling thread's nice value (Linux keeps one per thread; app.ui.priority raises it for long work)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except (AttributeError, OSError):
        return 0


def _autogroups() -> bool:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


AUTOGROUPS = _autogroups()
_PROC = Path("/proc")


def _others_now() -> tuple[float, float]:
    """(groups, same) right now: the runnable processes of /proc by session (autogroup), this one left out."""
    if not (_PROC / "loadavg").exists():
        return 0.0, os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    me, session = os.getpid(), os.getsid(0)
    groups: set[int] = set()
    same = 0
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            fields = (_PROC / entry.name / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if fields[0] != "R" or fields[3] == "0":  # not runnable, or a kernel thread
            continue
        if AUTOGROUPS and int(fields[3]) != session:
            groups.add(int(fields[3]))
        else:
            same += 1
    return float(len(groups)), float(same)


class _Sampler:
    """The smoothed (groups, same), updated by one daemon thread from its first use on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._smoothed: tuple[float, float] | None = None
        self._thread: threading.Thread | None = None

    def value(self) -> tuple[float, float]:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="cpu-load-sampler", daemon=True)
                self._thread.start()
            smoothed = self._smoothed
        return smoothed if smoothed is not None else _others_now()

    def _run(self) -> None:
        keep = 1.0 - SAMPLE_S / SMOOTHING_S
        while True:
            groups, same = _others_now()
            with self._lock:
                if self._smoothed is None:
                    self._smoothed = (groups, same)
                else:
                    self._smoothed = (keep * self._smoothed[0] + (1 - keep) * groups,
                                      keep * self._smoothed[1] + (1 - keep) * same)
            time.sleep(SAMPLE_S)


_SAMPLER = _Sampler()


def current_load(nice: int | None = None) -> CpuLoad:
    """The conditions a computation started now would run under (`nice`: the one it will run at; default the
    calling thread's)."""
    groups, same = _SAMPLER.value()
    return CpuLoad(groups, same, torch.get_num_threads(), cores(), thread_nice() if nice is None else nice)


class LoadDuring:
    """The mean conditions over a stretch of work: `with LoadDuring() as during: ...; during.cpu`."""

    def __enter__(self) -> LoadDuring:
        self._samples: list[tuple[float, float]] = []
        self._done = threading.Event()
        self._start = current_load()
        self._thread = threading.Thread(target=self._watch, name="cpu-load-during", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.wait(SAMPLE_S):
            self._samples.append(_others_now())

    def __exit__(self, *exc) -> None:
        self._done.set()

    @property
    def cpu(self) -> CpuLoad:
        """The start's conditions with the counts averaged over the work (the start's alone for short work)."""
        samples = [(self._start.groups, self._start.same), *self._samples]
        return CpuLoad(sum(g for g, _ in samples) / len(samples), sum(s for _, s in samples) / len(samples),
                       self._start.threads, self._start.cores, self._start.nice)
