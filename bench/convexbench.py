"""ConvexBench on the embedded models: macro F1 against composition depth for the direct and decomposed strategies.

Problems: backend.tasks.convexity (labels cycle convex, concave, neither, so every 3 problems of a depth are
balanced). Each (model, strategy, problem) answer goes through the store, so an interrupted run resumes where it
stopped; problems are taken in rounds (problem i of every depth, then i+1), and the result JSON is rewritten after
every round, so a run stopped early still has every depth at nearly the same n. F1 intervals: 95% percentile
bootstrap over problems; per-rule accuracy of the decomposed strategy's node answers with Wilson intervals.

Usage: nice -n 15 .venv/bin/python bench/convexbench.py [--models smollm2-135m-instruct,gemma-3-270m]
           [--depths 2,5,10,20,50,100] [--problems 12] [--seed 0]
Writes bench/results/convexbench.json (published to data/results/, where the Decoding page reads it).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.output import write_result  # noqa: E402
from bench.publish import publish  # noqa: E402

OUT = ROOT / "bench" / "results" / "convexbench.json"
COMMAND = "nice -n 15 .venv/bin/python bench/convexbench.py"


def _compact(row) -> dict:
    return {"strategy": row.strategy, "depth": row.depth, "problem_id": row.problem_id, "label": row.label,
            "answer": row.answer, "questions": row.questions, "forwards": row.forwards,
            "node_errors": sum(n.answer != n.truth for n in row.nodes), "seconds": round(row.wall_seconds, 2),
            "log_probs": [round(x, 4) for x in row.log_probs]}


def centred_direct(rows, depths) -> list[dict]:
    """A diagnostic of the direct strategy: is there signal in its log-probabilities beyond a prior that always
    prefers one word? Each candidate's log-probability is centred on its mean over the depth's problems (contextual
    calibration by the batch mean, transductive), then the argmax is scored like the answers."""
    import numpy as np

    from backend.decoding.convexity.scores import bootstrap_f1, macro_f1
    from backend.tasks.convexity_rules import ANSWERS

    out = []
    for depth in depths:
        part = [r for r in rows if r.strategy == "direct" and r.depth == depth and r.log_probs]
        if not part:
            continue
        scores = np.array([r.log_probs for r in part])
        answers = [ANSWERS[i] for i in (scores - scores.mean(axis=0)).argmax(axis=1)]
        labels = [r.label for r in part]
        lo, hi = bootstrap_f1(labels, answers)
        out.append({"depth": depth, "n": len(part), "f1": macro_f1(labels, answers), "f1_lo": lo, "f1_hi": hi})
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="smollm2-135m-instruct")
    parser.add_argument("--depths", default="2,5,10,20,50,100")
    parser.add_argument("--problems", type=int, default=12, help="per depth (a multiple of 3 keeps classes balanced)")
    parser.add_argument("--strategies", default="direct,decomposed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)

    from backend.decoding.convexity import ConvexBatch, ModelJudge, answer_on_model
    from backend.features import load_all
    from backend.models import load
    from backend.tasks.convexity import convex_problem

    load_all()
    depths = [int(d) for d in args.depths.split(",")]
    strategies = tuple(s for s in args.strategies.split(",") if s)
    command = (f"{COMMAND} --models {args.models} --depths {args.depths} --problems {args.problems} "
               f"--strategies {args.strategies} --seed {args.seed}")
    result = {"benchmark": "convexbench", "command": command, "depths": depths, "problems": args.problems,
              "strategies": list(strategies), "seed": args.seed, "models": {}, "finished": False,
              "threads": __import__("torch").get_num_threads()}
    start = time.perf_counter()
    for model_id in args.models.split(","):
        handle = load(model_id)
        judge = ModelJudge(handle)
        rows = []
        for i in range(args.problems):
            for depth in depths:
                problem = convex_problem(depth, i, args.seed)
                for strategy in strategies:
                    done = answer_on_model(handle, problem, strategy, judge)
                    rows.append(done.value)
                    print(f"[{model_id}] depth {depth} #{i} {strategy}: {done.value.answer} (label {problem.label}, "
                          f"{done.provenance})", file=sys.stderr, flush=True)
            batch = ConvexBatch(model_id=handle.id, strategies=strategies, depths=tuple(depths), rows=tuple(rows))
            result["models"][model_id] = {
                "model": handle.display_name, "fingerprint": handle.fingerprint, "rounds": i + 1,
                "f1": batch.f1_table(), "rules": batch.rule_accuracy(),
                "direct_centred": centred_direct(rows, depths), "rows": [_compact(r) for r in rows]}
            result["wall_seconds"] = round(time.perf_counter() - start, 1)
            result["load_average"] = round(os.getloadavg()[0], 1)
            write_result(args.out, result)
            publish(args.out)
    result["finished"] = True
    write_result(args.out, result)
    publish(args.out)
    return result


if __name__ == "__main__":
    main()
