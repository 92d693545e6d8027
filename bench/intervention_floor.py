"""The lowest intervention rate at which decisive guided intervention reproduces a reasoning model.

Along the reasoning model's own greedy outputs, count the steps where the base model's greedy token
differs: handing over exactly those steps rewrites the reasoning model's output token for token, and a
decisive gate (which takes over only where the two greedy tokens differ) cannot reproduce it with fewer.
The same rollouts the intervention sweep uses (greedy, first --n classic held-out problems), so after a
sweep this reads the store instead of decoding.

Usage: .venv/bin/python bench/intervention_floor.py --reasoning smollm2-135m-arith-reasoner-worked
           [--base smollm2-135m-instruct] [--n 50] [--tokens 128] [--threads 2]
Writes bench/results/intervention_floor_<reasoning>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from loading import ROOT, add_run_flags, loaded_model  # bench/, beside this script


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="smollm2-135m-instruct")
    ap.add_argument("--reasoning", default="smollm2-135m-arith-reasoner")
    ap.add_argument("--n", type=int, default=50, help="classic held-out problems (the sweep's first n)")
    add_run_flags(ap, "intervention_floor")
    args = ap.parse_args()
    if args.out.endswith("intervention_floor.json"):
        args.out = str(ROOT / "bench" / "results" / f"intervention_floor_{args.reasoning}.json")
    loaded_model(args.base, args.threads)  # threads, offline mode and the registries
    import numpy as np

    from backend.disagreement.pair import load_pair
    from backend.disagreement.rollout import ProblemSet
    from backend.disagreement.scoring import RolloutConfig, rollouts

    pair = load_pair(args.base, args.reasoning)
    problems = ProblemSet(args.n, "heldout", 0)
    store = f"DASH_STORE={os.environ['DASH_STORE']} " if os.environ.get("DASH_STORE") else ""
    out = {"pair": pair.label, "problems": args.n, "max_new_tokens": args.tokens,
           "command": store + " ".join([".venv/bin/python bench/intervention_floor.py", *sys.argv[1:]])}
    for source in ("base", "reasoning"):
        stored = rollouts(pair, RolloutConfig(problems, source, args.tokens))
        differs = np.concatenate([r.signals["differs"] for r in stored.value.rollouts])
        out[source] = {"accuracy": round(float(stored.value.accuracy), 4), "tokens": int(differs.size),
                       "differs_share": round(float(differs.mean()), 4), "from_store": stored.cached}
    # the floor: the reasoning path's differing share; the gap guided must close half of
    out["floor_rate"] = out["reasoning"]["differs_share"]
    out["gap_points"] = round(100 * (out["reasoning"]["accuracy"] - out["base"]["accuracy"]), 1)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
