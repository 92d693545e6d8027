"""Fits each declared verb's probes_per_unit (backend/<feature>/work.py): what one unit of its work costs in
calibration probes (backend/estimates/calibrate.py: the fastest of two 16-token forwards of the model).

For each case of bench/estimates.py (a small and a larger request of a verb on the embedded model) it times, in a
thread of its own at the page's background priority as a page computes, a probe then the verb's computation (the
store bypassed), side by side and in turns: (run seconds / request units) / probe seconds. With one torch thread (what a
crowded machine gets, backend/estimates/load.py) it takes their threads' CPU times instead of their wall times,
which the machine's other work does not lengthen. Each case runs once first, apart (a verb's first run
in a process pays one-off costs: tokenizer, data set, lazy imports, kernels set up for new shapes). The fit is the median of the ratios of both requests; their
rates apart say whether the work units scale right (large / small close to 1); the first run's CPU time
beyond a warm one's, in units, is the verb's first_run_units. Prints the constants to commit and
writes bench/results/fit_probes.json.

    .venv/bin/python bench/fit_probes.py                  # every case, 3 turns
    .venv/bin/python bench/fit_probes.py --turns 5 --cases MT
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.estimates import MODEL, Case, _cases, _in_page_thread, _page_nice  # noqa: E402
from bench.output import write_result  # noqa: E402

OUT = ROOT / "bench" / "results" / "fit_probes.json"


def _probe(handle):
    from backend.estimates.calibrate import probe

    timing = probe(handle.model, handle.fingerprint, _page_nice())
    if timing is None:
        raise RuntimeError("the model was busy: no probe")
    return timing


def _fit(case: Case, handle, turns: int) -> dict:
    from backend.estimates.work import work_of
    from backend.progress import silent

    subject, work = case.subject(handle), work_of(case.verb.feature, case.verb.name)
    def computed(config) -> tuple[float, int]:  # the torch threads a verb's run would use (backend/verbs.py)
        from backend.estimates.load import computing_threads, current_load

        with computing_threads(current_load()) as threads:
            cpu = time.thread_time()
            case.verb.compute(subject, config, silent)
            return time.thread_time() - cpu, threads

    first_cpu, _ = _in_page_thread(lambda: computed(case.small))  # one-off costs paid here, and measured
    rows = []
    for _ in range(turns):
        for size, config in (("small", case.small), ("large", case.large)):
            probe = _probe(handle)
            began = time.perf_counter()
            cpu, threads = _in_page_thread(lambda: computed(config))
            seconds = time.perf_counter() - began
            units = work.units(subject, config)
            # one thread: CPU times, which the load does not lengthen; else wall times side by side
            ratio = (cpu / (probe.seconds * probe.share) if threads == 1 and probe.threads == 1
                     else seconds / probe.seconds)
            rows.append({"size": size, "units": units, "seconds": round(seconds, 3), "cpu_s": round(cpu, 3),
                         "threads": threads, "probe_s": round(probe.seconds, 4), "probe_share": round(probe.share, 3),
                         "probes_per_unit": round(ratio / units, 3)})
    by_size = {size: statistics.median(r["probes_per_unit"] for r in rows if r["size"] == size)
               for size in ("small", "large")}
    fitted = statistics.median(r["probes_per_unit"] for r in rows)
    # the first run's one-off costs in the verb's units: its CPU time beyond a warm small run's, over a unit's
    warm = [r for r in rows if r["size"] == "small"]
    warm_cpu, small_units = statistics.median(r["cpu_s"] for r in warm), warm[0]["units"]
    first_run_units = max(0.0, (first_cpu - warm_cpu) / (warm_cpu / small_units))
    print(f"{case.name:28s} probes_per_unit {fitted:6.2f} (declared {work.probes_per_unit}); small {by_size['small']:.2f}"
          f", large {by_size['large']:.2f}: large / small {by_size['large'] / by_size['small']:.2f}; first run "
          f"{first_run_units:.2f} units more (declared {work.first_run_units})", flush=True)
    return {"case": case.name, "feature": case.verb.feature, "verb": case.verb.name,
            "declared": work.probes_per_unit, "fitted": round(fitted, 2),
            "large_over_small": round(by_size["large"] / by_size["small"], 2),
            "first_run_cpu_s": round(first_cpu, 3), "first_run_units": round(first_run_units, 2),
            "first_run_units_declared": work.first_run_units, "runs": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=3, help="small and large requests timed this many times each")
    parser.add_argument("--cases", nargs="+", default=[], metavar="WORD", help="only the cases naming one of these")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="fit-probes-")) / "store.duckdb")
    from backend.models import load

    handle = load(MODEL)
    load_before = os.getloadavg()[0]
    cases = [c for c in _cases() if not args.cases or any(w.lower() in c.name.lower() for w in args.cases)]
    fits = [_fit(case, handle, args.turns) for case in cases]
    write_result(args.out, {"model": MODEL, "turns": args.turns,
                            "loadavg": [round(load_before, 2), round(os.getloadavg()[0], 2)], "fits": fits})


if __name__ == "__main__":
    main()
