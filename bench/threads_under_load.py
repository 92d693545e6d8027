"""Torch threads on crowded cores: what a page's computation costs with 2 torch threads against 1, at several loads.

For each level (0, 2, 4, 6 busy-loop processes, each in a session of its own, on top of whatever else runs) this
times, in a thread of its own at the page's background priority (app.ui.priority) as a page computes, the
calibration probe (backend/estimates/calibrate.py: the fastest of two 16-token forwards) and a greedy decode of
8 tokens (the Decoding verb's compute, the store bypassed), with torch's intra-op threads set to 1 and to 2, taking
turns (1, 2, 1, 2) so that drifting background load falls on both. It also records the share of a core one thread
at that priority got (backend/estimates/load.py). Writes bench/results/threads_under_load.json.

    .venv/bin/python bench/threads_under_load.py                # every level
    .venv/bin/python bench/threads_under_load.py --levels 0 4   # some levels only
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.estimates import _in_page_thread  # noqa: E402
from bench.output import write_result  # noqa: E402

OUT = ROOT / "bench" / "results" / "threads_under_load.json"
MODEL = "smollm2-135m-instruct"
SETTLE_S = 3.0  # the busy loops started and spread over the cores
BUSY_LOOP = "while True: pass"
TURNS = 2  # each thread count timed this many times, in turns with the other


def _timed_in_page_thread(threads: int, call) -> float:
    """Seconds of `call()` in a new thread at the page's background priority with `threads` torch threads (torch
    keeps the count per OS thread once set there)."""
    import torch

    def timed() -> float:
        torch.set_num_threads(threads)
        began = time.perf_counter()
        call()
        return time.perf_counter() - began

    return _in_page_thread(timed)


def _work(handle) -> dict[str, Any]:
    import torch

    from backend.decoding.config import DecodeConfig
    from backend.decoding.run import RunKey, compute_run
    from backend.models.locks import model_lock

    ids = torch.arange(100, 116, dtype=torch.long).unsqueeze(0)
    key = RunKey(DecodeConfig(strategy="greedy", max_new_tokens=8), "Write one sentence about the sea.", None,
                 "bench", True)

    @torch.no_grad()
    def probe() -> None:
        with model_lock(handle.model):
            handle.model(input_ids=ids)

    return {"probe (16-token forward)": probe, "greedy decode, 8 tokens": lambda: compute_run(handle, key)}


def _level(busy: int, handle) -> dict:
    from app.ui.run import run_nice
    from backend.estimates.load import measure_share

    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP], start_new_session=True) for _ in range(busy)]
    try:
        time.sleep(SETTLE_S if busy else 0)
        nice = run_nice()
        share_before, load_before = measure_share(nice), os.getloadavg()[0]
        rows = []
        for name, call in _work(handle).items():
            seconds: dict[int, list[float]] = {1: [], 2: []}
            for _ in range(TURNS):
                for threads in (1, 2):
                    seconds[threads].append(_timed_in_page_thread(threads, call))
            one, two = statistics.median(seconds[1]), statistics.median(seconds[2])
            rows.append({"work": name, "seconds_1_thread": [round(s, 3) for s in seconds[1]],
                         "seconds_2_threads": [round(s, 3) for s in seconds[2]],
                         "two_over_one": round(two / one, 2)})
            print(f"busy {busy}: {name:26s} 1 thread {one:7.2f} s  2 threads {two:7.2f} s  ratio {two / one:5.2f}",
                  flush=True)
        share_after = measure_share(nice)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return {"busy_loops": busy, "nice": nice, "share": [round(share_before, 3), round(share_after, 3)],
            "loadavg": [round(load_before, 2), round(os.getloadavg()[0], 2)], "runs": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", type=int, nargs="+", default=[0, 2, 4, 6], help="busy-loop processes per level")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a timeout still ends the busy loops (finally)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from backend.estimates.load import cores
    from backend.models import load

    handle = load(MODEL)
    for call in _work(handle).values():  # warmed once: the first forward of a model pays one-off costs
        _timed_in_page_thread(2, call)
    levels = [_level(busy, handle) for busy in args.levels]
    write_result(args.out, {"model": MODEL, "cores": cores(), "levels": levels})


if __name__ == "__main__":
    main()
