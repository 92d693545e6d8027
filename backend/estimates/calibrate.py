"""The calibration probe: one short forward of a model, timed on this machine, for the verbs that never ran here.
Kept in the store (as a timing with the load it ran under), so a model is probed once per store."""
from __future__ import annotations

import os
import threading
import time
from typing import Any

import torch
from torch import nn

from backend.estimates.load import CpuLoad, computing_threads, current_load, own_share, remember_share
from backend.models.locks import model_lock
from backend.store.timings import PROBE, Timing, record_timing

PROBE_TOKENS = 16
PROBE_REPEATS = 2  # the fastest of these: the first forward of a model can pay one-off set-up costs
LOCK_WAIT_S = 2.0  # a model busy with another computation is not probed (the estimate says nothing rather than wait)


def probe_model(subject: Any) -> nn.Module | None:
    """The model a verb's subject computes with: a loaded model (`.model`), a subject holding one (`.handle`), or
    a pair's base model (`.base`; both models of a pair are the same size)."""
    for holder in (subject, getattr(subject, "handle", None), getattr(subject, "base", None)):
        model = getattr(holder, "model", None)
        if isinstance(model, nn.Module):
            return model
    return None


def probe(model: nn.Module, fingerprint: str, nice: int = 0) -> Timing | None:
    """One forward of PROBE_TOKENS tokens timed now (the fastest of PROBE_REPEATS) and stored; None when the model
    is busy with another computation. It runs as the computations it stands for do: in a thread of its own at
    `nice`, holding the model's lock, with the torch threads a computation would use now
    (`backend.estimates.load.threads_for`); torch on a CPU runs its operations very differently from Python's main
    thread and from other threads: a forward of SmolLM2-135M at load 16 took 7 s in the main thread, 0.2-0.3 s in a
    new one."""
    cpu = current_load(nice)
    timed: list[tuple[float, float]] = []  # (wall, the probe thread's CPU) seconds of each forward
    used: list[int] = []
    worker = threading.Thread(target=_forwards, args=(model, cpu, timed, used), name="estimate-probe", daemon=True)
    worker.start()
    worker.join()
    if not timed:  # the model was busy, or its forward failed: nothing to calibrate with
        return None
    wall, cpu_seconds = min(timed)
    share = own_share(cpu_seconds, wall, used[0])  # what the forward itself got: one snapshot before it is not it
    if share is not None:
        remember_share(cpu.nice, share)
    timing = Timing("", PROBE, fingerprint, 1.0, wall, cpu.share if share is None else share, used[0], cpu.cores,
                    cpu.nice)
    record_timing(timing)
    return timing


@torch.no_grad()
def _forwards(model: nn.Module, cpu: CpuLoad, timed: list[tuple[float, float]], used: list[int]) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), cpu.nice)
    except (AttributeError, OSError):
        pass  # not Linux, or a nice this process may not take: probed at the thread's own
    lock = model_lock(model)
    if not lock.acquire(timeout=LOCK_WAIT_S):
        return
    try:
        with computing_threads(cpu) as threads:
            used.append(threads)
            device = next(model.parameters()).device
            ids = torch.arange(100, 100 + PROBE_TOKENS, dtype=torch.long, device=device).unsqueeze(0)
            for _ in range(PROBE_REPEATS):
                begin, begin_cpu = time.perf_counter(), time.thread_time()
                model(input_ids=ids)
                timed.append((time.perf_counter() - begin, time.thread_time() - begin_cpu))
    finally:
        lock.release()
