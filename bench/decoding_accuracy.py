"""Accuracy per decoding strategy on held-out arithmetic problems (embedded model, CPU).

Every (strategy, problem) run goes through the store, so an interrupted evaluation resumes where
it stopped. Settings are modest so that the whole run fits a shared CPU; budgets are comparable:
best-of-n and ASMC use n = 4 sequences, MH about 2-3x the tokens of one sample.

Usage: .venv/bin/python bench/decoding_accuracy.py [--problems 50] [--tokens 64]
Writes bench/results/decoding_accuracy.json.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--problems", type=int, default=50)
    ap.add_argument("--difficulty", type=int, default=1, help="arithmetic steps per problem (1-3; 0 = mixed)")
    ap.add_argument("--tokens", type=int, default=64, help="max new tokens per sequence")
    ap.add_argument("--alpha", type=float, default=4.0)
    ap.add_argument("--n", type=int, default=4, help="best-of-n samples and ASMC particles")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "decoding_accuracy.json"))
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from backend.decoding import STRATEGIES, DecodeConfig, run_batch, settings_for
    from backend.features import load_all
    from backend.models import load
    from backend.tasks.arithmetic import generate_problems

    load_all()
    handle = load(args.model)
    problems = generate_problems(args.problems, split="heldout", seed=0, difficulty=args.difficulty or None)
    base = DecodeConfig(max_new_tokens=args.tokens, alpha=args.alpha, n=args.n, block_size=16, mh_steps=1,
                        temperature=1.0)
    settings = settings_for([base.replace(strategy=s) for s in
                             ("greedy", "sampling", "low_temp", "best_of_n", "mh", "asmc")])
    start = time.perf_counter()

    def progress(fraction: float, message: str) -> None:
        print(f"[{fraction:5.1%} {time.perf_counter() - start:6.0f}s] {message}", file=sys.stderr, flush=True)

    done = run_batch(handle, problems, settings, progress=progress)
    batch = done.value
    summary = batch.summary()
    for row in summary:
        rows = [r for r in batch.rows if r.label == row["label"]]
        if rows[0].ess_min_ratio is not None:
            for verdict in (True, False):
                vals = [r.ess_min_ratio for r in rows if r.correct is verdict]
                row[f"mean_ess_min_over_n_{'correct' if verdict else 'wrong'}"] = (
                    statistics.fmean(vals) if vals else None)
        if rows[0].acceptance_rate is not None:
            row["mh_acceptance_rate"] = statistics.fmean(r.acceptance_rate for r in rows)
    result = {"model": handle.display_name, "problems": len(problems), "split": "heldout",
              "difficulty": args.difficulty or "mixed", "max_new_tokens": args.tokens, "alpha": args.alpha,
              "settings": {s.label: {"strategy": s.config.strategy,
                                     **{p: getattr(s.config, p) for p in STRATEGIES.get(s.config.strategy).params}}
                           for s in settings},
              "provenance": done.provenance, "summary": summary}
    text = json.dumps(result, indent=1, default=str)
    print(text)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
