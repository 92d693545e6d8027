"""Decoding benchmarks on the embedded model (CPU); the three comparisons of the issue, in one run.

1. Cache-coherent resampling (reorder KV-cache rows) vs recomputing every prefix after each
   resampling: one ASMC round, N particles, T new tokens (fixed length), same seed.
2. ASMC overhead vs plain batched sampling of N sequences of the same length and proposal.
3. ASMC vs MH power sampling at equal generated-token budget on held-out problems: latency
   (mean, p95); both through `decode` (cached in the store), interleaved problem by problem so
   both see the same machine load.

Usage: .venv/bin/python bench/decoding.py [--problems 20] [--fresh]   (JSON to stdout and
bench/results/decoding.json). --fresh uses a temporary store so every run is recomputed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _timed(fn):
    """(result, wall seconds, CPU seconds of this process); CPU time is robust to other jobs on a shared box."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bench_resampling(handle, ids, n: int, tokens: int, alpha: float, seed: int, reps: int) -> dict:
    """Comparisons 1 and 2 on one prompt: plain sampling, ASMC (reorder), ASMC (recompute), then
    `reps - 1` more interleaved (plain, reorder) pairs; medians of wall and CPU seconds."""
    import torch

    from backend.decoding.algorithms.smc import smc_round
    from backend.decoding.sampler import rollout
    from backend.models.rules import stop_ids

    stops = tuple(sorted(stop_ids(handle)))

    def gen():
        return torch.Generator().manual_seed(seed)

    def plain():
        return rollout(handle.model, ids, n, 1.0 / alpha, tokens, stops, gen(), stop_at_eos=False)

    def asmc(cache="reorder"):
        return smc_round(handle.model, ids, n, alpha, tokens, stops, gen(), stop_at_eos=False, cache=cache)

    rollout(handle.model, ids, n, 1.0, 4, stops, gen())  # warm-up: first-touch allocations are not measured
    times = {"plain": [], "reorder": [], "recompute": []}
    p_out, *t = _timed(plain)
    times["plain"].append(t)
    reorder, *t = _timed(asmc)
    times["reorder"].append(t)
    recompute, *t = _timed(lambda: asmc("recompute"))
    times["recompute"].append(t)
    for rep in range(reps - 1):
        times["plain"].append(_timed(plain)[1:])
        times["reorder"].append(_timed(asmc)[1:])
        print(f"repetition {rep + 2}/{reps} done", file=sys.stderr, flush=True)
    med = {k: {"wall_s": statistics.median(w for w, _ in v), "cpu_s": statistics.median(c for _, c in v),
               "runs": len(v)} for k, v in times.items()}
    return {"prompt_tokens": int(ids.shape[1]), "seconds": med, "all_runs_wall_cpu_s": times,
            "resampling_events": reorder.trace.resampling_events, "ess_min_over_n": reorder.trace.ess_min_ratio,
            "forward_passes": {"plain": p_out.forward_passes, "reorder": reorder.forward_passes,
                               "recompute": recompute.forward_passes},
            "same_particles_both_ways": reorder.rows == recompute.rows,
            "speedup_reorder_vs_recompute": {u: med["recompute"][u] / med["reorder"][u] for u in ("wall_s", "cpu_s")},
            "asmc_overhead_vs_plain": {u: med["reorder"][u] / med["plain"][u] for u in ("wall_s", "cpu_s")}}


def bench_asmc_vs_mh(handle, problems, tokens: int, budget: int, alpha: float, block: int) -> dict:
    """Comparison 3: both strategies at about budget * tokens generated tokens per problem."""
    from backend.decoding import DecodeConfig, run_one
    from backend.decoding.algorithms.mh import at_budget, expected_tokens

    mh_cfg = at_budget(DecodeConfig(strategy="mh", max_new_tokens=tokens, alpha=alpha, block_size=block), budget)
    asmc_cfg = DecodeConfig(strategy="asmc", max_new_tokens=tokens, alpha=alpha, n=budget)
    runs = {"mh": [], "asmc": []}
    for i, problem in enumerate(problems):
        for name, cfg in (("mh", mh_cfg), ("asmc", asmc_cfg)):
            r = run_one(handle, problem, cfg).value
            runs[name].append(r)
        print(f"[{i + 1}/{len(problems)}] mh {runs['mh'][-1].wall_seconds:.1f}s "
              f"asmc {runs['asmc'][-1].wall_seconds:.1f}s", file=sys.stderr, flush=True)
    out = {"tokens": tokens, "budget_x": budget, "mh": {"block_size": block, "mh_steps": mh_cfg.mh_steps,
                                                        "expected_tokens": expected_tokens(mh_cfg)},
           "asmc": {"n": budget}}
    for name, rs in runs.items():
        lat = sorted(r.wall_seconds for r in rs)
        out[name].update({
            "mean_latency_s": statistics.fmean(lat), "p95_latency_s": _p95(lat), "max_latency_s": lat[-1],
            "mean_tokens_generated": statistics.fmean(r.tokens_generated for r in rs),
            "accuracy": statistics.fmean(bool(r.correct) for r in rs)})
    out["mh"]["acceptance_rate"] = statistics.fmean(r.acceptance_rate for r in runs["mh"])
    out["asmc"]["mean_ess_min_over_n"] = statistics.fmean(r.ess_min_ratio for r in runs["asmc"])
    return out


def _p95(values: list[float]) -> float:
    import numpy as np

    return float(np.percentile(values, 95))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest on a shared box)")
    ap.add_argument("--n", type=int, default=16, help="particles for comparisons 1-2")
    ap.add_argument("--tokens", type=int, default=128, help="new tokens for comparisons 1-2")
    ap.add_argument("--reps", type=int, default=2, help="(plain, ASMC) pairs for comparison 2")
    ap.add_argument("--alpha", type=float, default=4.0)
    ap.add_argument("--problems", type=int, default=20, help="held-out problems for comparison 3")
    ap.add_argument("--mh-tokens", type=int, default=16, help="max new tokens for comparison 3")
    ap.add_argument("--budget", type=int, default=8, help="generated tokens / max new tokens, comparison 3")
    ap.add_argument("--block", type=int, default=8, help="MH block size, comparison 3")
    ap.add_argument("--fresh", action="store_true", help="temporary store: recompute every run")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: resampling,mh")
    ap.add_argument("--merge", action="store_true", help="keep the skipped parts from the existing output file")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "decoding.json"))
    args = ap.parse_args()
    if args.fresh:
        os.environ["DASH_STORE"] = str(Path(tempfile.mkdtemp(prefix="bench-decoding-")) / "store.duckdb")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from backend.features import load_all
    from backend.models import load
    from backend.models.generate import encode_prompt
    from backend.tasks.arithmetic import format_prompt, generate_problems

    load_all()  # registers every strategy (after the store path is set)
    handle = load(args.model)
    problems = generate_problems(args.problems, split="heldout", seed=0)
    out_path = Path(args.out)
    previous = json.loads(out_path.read_text()) if args.merge and out_path.exists() else {}
    result = {**previous, "model": handle.display_name, "device": handle.device, "threads": args.threads,
              "cpu_count": os.cpu_count(), "load_average_start": os.getloadavg(), "python": platform.python_version(),
              "torch": torch.__version__, "alpha": args.alpha}
    skip = set(args.skip.split(","))
    if "resampling" not in skip:
        ids = encode_prompt(handle, format_prompt(problems[0]))
        r = bench_resampling(handle, ids, args.n, args.tokens, args.alpha, seed=0, reps=args.reps)
        result["resampling"] = {"n": args.n, "tokens": args.tokens, **r}
        print(json.dumps(r, indent=1), file=sys.stderr, flush=True)
    if "mh" not in skip:
        m = bench_asmc_vs_mh(handle, problems, args.mh_tokens, args.budget, args.alpha, args.block)
        m["p95_ratio_mh_over_asmc"] = m["mh"]["p95_latency_s"] / m["asmc"]["p95_latency_s"]
        m["mean_ratio_mh_over_asmc"] = m["mh"]["mean_latency_s"] / m["asmc"]["mean_latency_s"]
        m["problems"] = len(problems)
        result["asmc_vs_mh"] = m
    result["load_average_end"] = os.getloadavg()
    result["targets"] = {"speedup_reorder_vs_recompute": ">= 3 (N=16, 128 tokens)",
                         "asmc_overhead_vs_plain": "<= 1.3", "p95_ratio_mh_over_asmc": ">= 5 (>= 20 problems)"}
    text = json.dumps(result, indent=1)
    print(text)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text + "\n")


if __name__ == "__main__":
    main()
