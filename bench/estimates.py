"""Estimates that hold: the time the app states before a run against the time the run takes, at several loads.

For each load level (0, 2, 4, 6 busy-loop processes on top of whatever else runs: up to 3x the cores of a 2-core
machine) this starts that many busy loops, each in a session of its own (as independent jobs are), and on a
fresh store runs each case below twice, a small then a larger request, as a page does: in a thread of its own at
the page's background priority (app.ui.priority). Before each run it records the estimate the app would state
(`backend.estimates.estimate`: the first request of a verb is calibrated with a probe forward, the second uses the
first's rate), then the actual compute time. The ratio actual / estimate should be within 1.5x both ways. Each
run records the torch threads the estimate assumed (backend/estimates/load.py `threads_for`: one on crowded cores).
Writes bench/results/estimates.json.

    .venv/bin/python bench/estimates.py                 # every level (about 5 minutes on an idle 2-core machine)
    .venv/bin/python bench/estimates.py --levels 0 2    # some levels only
    .venv/bin/python bench/estimates.py --cases Decoding FP8   # some cases only
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.ui.priority import BACKGROUND_NICE_STEP, background_priority  # noqa: E402
from bench.output import write_result  # noqa: E402

OUT = ROOT / "bench" / "results" / "estimates.json"
MODEL = "smollm2-135m-instruct"
SETTLE_S = 5.0  # the busy loops started and spread over the cores
WITHIN = 1.5
BUSY_LOOP = "while True: pass"


@dataclass(frozen=True)
class Case:
    """One verb with two requests of different size; `subject(handle)` is what the verb works on."""

    name: str
    verb: Any
    subject: Callable[[Any], Any]
    small: Any
    large: Any


def _cases() -> list[Case]:
    from backend.decoding.config import DecodeConfig
    from backend.decoding.run import RunKey, run
    from backend.fp8.bounds import BoundsConfig, bounds
    from backend.mt import HeadsConfig, builtin
    from backend.mt.heads import heads_verb
    from backend.mt.subject import OnData
    from backend.watermark.generation import GenerateRequest, generate_verb
    from backend.watermark.sampling import SamplingConfig

    data = builtin()
    heads = HeadsConfig(src="en", tgt="fr", n_prompts=1, k_shots=1, dataset=data.digest)
    prompt = "Write one sentence about the sea."
    return [
        Case("Watermark generate (kgw)", generate_verb, lambda h: h,
             GenerateRequest(prompt=prompt, sampling=SamplingConfig(max_sentences=1)),
             GenerateRequest(prompt=prompt, sampling=SamplingConfig(max_sentences=3))),
        Case("MT heads", heads_verb, lambda h: OnData(h, data), heads, dataclasses.replace(heads, n_prompts=3)),
        Case("Decoding run (greedy)", run, lambda h: h,
             RunKey(DecodeConfig(strategy="greedy", max_new_tokens=8), prompt, None, "bench", True),
             RunKey(DecodeConfig(strategy="greedy", max_new_tokens=32), prompt, None, "bench", True)),
        Case("FP8 bounds", bounds, lambda h: h, BoundsConfig(n_texts=1, max_tokens=32, verify=False),
             BoundsConfig(n_texts=4, max_tokens=32, verify=False)),
    ]


def _in_page_thread(call: Callable[[], Any]) -> Any:
    """`call()` in a new thread at the page's background priority, as a page computes (its nice value stays
    raised with the thread, so each run gets a fresh one)."""
    out: dict[str, Any] = {}

    def body() -> None:
        try:
            with background_priority():
                out["value"] = call()
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller
            out["error"] = err

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _page_nice() -> int:
    from backend.estimates.load import thread_nice

    return min(19, thread_nice() + BACKGROUND_NICE_STEP)


def _measure(case: Case, handle, config, size: str) -> dict:
    from backend.estimates import estimate
    from backend.estimates.work import work_of

    subject = case.subject(handle)
    nice = _page_nice()
    began = time.perf_counter()
    stated = estimate(case.verb, subject, config, nice=nice)
    estimate_s = time.perf_counter() - began
    computed = _in_page_thread(lambda: case.verb(subject, config))
    if computed.cached:
        raise RuntimeError(f"{case.name} {size}: served from the store, not computed")
    ratio = computed.seconds / stated.seconds
    row = {"case": case.name, "size": size, "units": work_of(case.verb.feature, case.verb.name).units(subject, config),
           "estimate_s": round(stated.seconds, 2), "basis": stated.basis,
           "share_assumed": round(stated.cpu.share, 3), "others_assumed": round(stated.cpu.others, 2),
           "threads_assumed": stated.cpu.threads,
           "actual_s": round(computed.seconds, 2), "ratio": round(ratio, 3),
           "seconds_to_estimate": round(estimate_s, 2),
           "loadavg_after": round(os.getloadavg()[0], 2)}
    print(f"  {case.name:28s} {size:5s} estimate {stated.seconds:7.1f} s  actual {computed.seconds:7.1f} s  "
          f"ratio {ratio:5.2f}  ({stated.basis}, share of a core {stated.cpu.share:.2f}, "
          f"{stated.cpu.threads} torch thread{'s' if stated.cpu.threads > 1 else ''})", flush=True)
    return row


def _level(busy: int, handle, cases: list[Case]) -> dict:
    from backend.estimates.load import current_load, forget_load
    from backend.store.timings import PROBE, recent_timings

    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP], start_new_session=True) for _ in range(busy)]
    try:
        time.sleep(SETTLE_S if busy else 0)
        forget_load()  # each level starts as a fresh app does: no memory of the previous level's load
        os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="estimates-")) / "store.duckdb")
        share = current_load(nice=_page_nice()).share
        print(f"busy loops {busy}: share of a core {share:.2f} (loadavg {os.getloadavg()[0]:.1f})", flush=True)
        start = {"loadavg": round(os.getloadavg()[0], 2), "share": round(share, 3)}
        rows = [_measure(case, handle, config, size) for case in cases
                for size, config in (("small", case.small), ("large", case.large))]
        probe = recent_timings("", PROBE, handle.fingerprint, limit=1)[0]
        end = {"loadavg": round(os.getloadavg()[0], 2), "share": round(current_load(nice=_page_nice()).share, 3)}
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return {"busy_loops": busy, "start": start, "end": end, "runs": rows,
            "probe": {"seconds": probe.seconds, "share": round(probe.share, 3), "threads": probe.threads,
                      "nice": probe.nice}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", type=int, nargs="+", default=[0, 2, 4, 6], help="busy-loop processes per level")
    parser.add_argument("--cases", nargs="+", default=[], metavar="WORD",
                        help="only the cases whose name contains one of these words (e.g. Decoding FP8)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a timeout still ends the busy loops (finally)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from backend.models import load

    began = time.perf_counter()
    handle = load(MODEL)
    cases = [c for c in _cases() if not args.cases or any(word.lower() in c.name.lower() for word in args.cases)]
    levels: list[dict] = []
    for busy in args.levels:  # written after each level: a run cut short keeps the levels it finished
        levels.append(_level(busy, handle, cases))
        _write(args.out, levels, cases, began, complete=len(levels) == len(args.levels))


def _write(out: Path, levels: list[dict], cases: list[Case], began: float, complete: bool) -> None:
    import torch

    from backend.estimates.load import cores

    ratios = [run["ratio"] for level in levels for run in level["runs"]]
    write_result(out, {
        "model": MODEL, "cases": [c.name for c in cases], "cores": cores(), "torch_threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(), "python": platform.python_version(),
        "complete": complete, "levels": levels, "within": WITHIN,
        "every_ratio_within": all(1 / WITHIN <= r <= WITHIN for r in ratios),
        "worst_ratio": max(ratios, key=lambda r: max(r, 1 / r)),
        "median_ratio": round(statistics.median(ratios), 3), "bench_seconds": round(time.perf_counter() - began, 1),
    })


if __name__ == "__main__":
    main()
