"""Unlearnable examples and gradient similarity (issue 36, RLVR) on the embedded pair: SmolLM2-135M-Instruct and the
same model with the project's arithmetic LoRA (the Disagreement page's default pair), on the adapter's own training
problems. An example is unlearnable when the base fails it and the trained adapter still fails it (a correct worked
solution exists: it is the training target); learned when the base fails and the adapter solves it. The finding:
each example's mean gradient similarity to the rest (LoRA-factor gradients, CountSketch-projected), unlearnable
against learned, by a two-sided Mann-Whitney test and the AUROC of low similarity as a predictor of unlearnability.

Every example is cached in the store on its own, and the result is rewritten after each step of --every examples,
so a killed run resumes and a partial run still reports what it has (`examples_done`):

    DASH_STORE=data/cache/learnability.duckdb nohup nice -n 5 .venv/bin/python bench/learnability.py --n 200 \
        --threads 2 > data/cache/learnability.log 2>&1 &

`examples_computed` and `seconds_this_process` say how many examples this process computed itself and in what time
(a fresh store: all of them, so the time is the whole run's).

Writes bench/results/learnability.json.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.disagreement.learnability import BATCH, LearnabilityConfig, learnability  # noqa: E402
from backend.disagreement.learnability_stats import group_test  # noqa: E402
from backend.disagreement.pair import load_pair  # noqa: E402
from backend.features import load_all  # noqa: E402
from backend.params import default_of  # noqa: E402
from bench.output import write_result  # noqa: E402

BASE, REASONER = "smollm2-135m-instruct", "smollm2-135m-arith-reasoner"
OUT = ROOT / "bench" / "results" / "learnability.json"
START = time.perf_counter()


def log(fraction: float, message: str) -> None:
    print(f"[{time.perf_counter() - START:7.0f} s] {fraction:5.1%} {message}", file=sys.stderr, flush=True)


def _num(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 4)


def summary(result, n_wanted: int, seconds: float, command: str, computed: int, threads: int) -> dict:
    kinds = np.array(result.categories)
    losses = np.array([r.loss for r in result.records])
    mean = result.mean_similarity
    t = result.test
    groups = {kind: {"count": int((kinds == kind).sum()),
                     "mean_similarity": [round(float(v), 4) for v in mean[kinds == kind]]} for kind in
              ("easy", "learned", "unlearnable")}
    return {"pair": f"{BASE} + {REASONER}", "data": result.data, "gradient_of": result.gradient_of,
            "examples_wanted": n_wanted, "examples_done": len(result.records),
            "base_accuracy": round(float(np.mean([r.base_correct for r in result.records])), 4),
            "reasoning_accuracy": round(float(np.mean([r.reasoning_correct for r in result.records])), 4),
            "groups": groups,
            "test": {"n_unlearnable": t.n_unlearnable, "n_learned": t.n_learned,
                     "median_unlearnable": _num(t.median_unlearnable), "median_learned": _num(t.median_learned),
                     "mann_whitney_u": _num(t.mann_whitney_u), "p_value": _num(t.p_value), "auroc": _num(t.auroc)},
            # a confound to read beside it: unlearnable examples also have a higher loss on their solution
            "auroc_high_loss": _num(group_test(-losses[kinds == "unlearnable"], -losses[kinds == "learned"]).auroc),
            "per_example": [{"problem_id": r.problem_id, "category": k, "difficulty": r.difficulty,
                             "loss": round(r.loss, 4), "mean_similarity": round(float(m), 4)}
                            for r, k, m in zip(result.records, kinds, mean)],
            "mean_loss": {kind: _num(float(np.mean([r.loss for r, k in zip(result.records, kinds) if k == kind])))
                          if (kinds == kind).any() else None for kind in ("easy", "learned", "unlearnable")},
            "seconds_this_process": round(seconds, 1),  # a resumed run counts only what it computed itself
            "examples_computed": computed, "threads": threads, "rollout_batch": BATCH,
            "cpus": os.cpu_count(), "load_average": round(os.getloadavg()[0], 1), "command": command}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--every", type=int, default=8, help="rewrite the result after this many more examples")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    load_all()
    pair = load_pair(BASE, REASONER, log)
    command = f".venv/bin/python bench/learnability.py --n {args.n} --threads {args.threads}"
    page_n = default_of(LearnabilityConfig, "n")  # the page's first view is one of the steps (a reference artifact)
    steps = sorted({*range(args.every, args.n, args.every), args.n, *([page_n] if page_n <= args.n else [])})
    computed = 0

    def counting(fraction: float, message: str) -> None:  # one "gradients" message per example computed here
        nonlocal computed
        computed += message.endswith(": gradients")
        log(fraction, message)

    for k in steps:
        result = learnability(pair, LearnabilityConfig(n=k), counting)
        log(1.0, f"{k} examples")
        write_result(OUT, summary(result.value, args.n, time.perf_counter() - START, command, computed,
                                  args.threads))


if __name__ == "__main__":
    main()
