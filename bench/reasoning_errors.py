"""What kind of miss each wrong greedy answer of a model is, per problem set and number of steps.

Greedy decodes go through the store with the decoding benchmark's settings (96 new tokens, the chat
prompt), so after `bench/decoding_accuracy.py` this reads its runs instead of decoding again. Kinds
(backend.tasks.solution_errors): no answer, arithmetic slip (a written equation is false), too few
steps, wrong plan (every equation true, answer wrong); and how many slips sit in a plan that reaches
the answer once its equations are computed correctly.

Usage: .venv/bin/python bench/reasoning_errors.py [--model smollm2-135m-arith-reasoner] [--heldout 100]
           [--handwritten 60] [--threads 2]
Writes bench/results/reasoning_errors.json and prints the table the model card quotes.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from loading import add_run_flags, loaded_model  # bench/, beside this script


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m-arith-reasoner")
    ap.add_argument("--heldout", type=int, default=100, help="problems from the generator's broad held-out split")
    ap.add_argument("--handwritten", type=int, default=60, help="problems of the hand-written set, evenly spread")
    add_run_flags(ap, "reasoning_errors")
    args = ap.parse_args()
    handle = loaded_model(args.model, args.threads)
    from decoding_settings import benchmark_config, benchmark_sets  # bench/, beside this script
    from backend.decoding.run import run_one
    from backend.tasks.solution_errors import MISS_KINDS, classify, right_if_computed, tally

    greedy = benchmark_config(args.tokens).replace(strategy="greedy")  # the benchmark's run, read from the store
    result: dict = {"model": handle.display_name, "model_id": args.model, "fingerprint": handle.fingerprint,
                    "command": " ".join([".venv/bin/python bench/reasoning_errors.py", *sys.argv[1:]]), "sets": {}}
    for name, problems in benchmark_sets("broad", args.heldout, args.handwritten).items():
        kinds, examples, slips_in_right_plans = [], {}, 0
        for i, problem in enumerate(problems):
            reply = run_one(handle, problem, greedy).value.output
            kind = classify(problem, reply)
            kinds.append((problem.difficulty, kind))
            slips_in_right_plans += kind == "arithmetic slip" and right_if_computed(problem, reply)
            examples.setdefault(kind, {"question": problem.question, "answer": problem.answer, "reply": reply})
            print(f"{name} {i + 1}/{len(problems)}: {kind}", file=sys.stderr, flush=True)
        result["sets"][name] = {
            "n": len(problems), "all": tally([k for _, k in kinds]), "slips_in_right_plans": slips_in_right_plans,
            "by_steps": {str(d): tally([k for s, k in kinds if s == d]) for d in sorted({d for d, _ in kinds})},
            "examples": {k: examples[k] for k in MISS_KINDS if k in examples}}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(markdown(result))


def markdown(result: dict) -> str:
    from backend.tasks.solution_errors import KINDS

    lines = ["| set | steps | n | " + " | ".join(KINDS) + " |", "|---|---|---|" + "---|" * len(KINDS)]
    for name, part in result["sets"].items():
        for steps, counts in [("all", part["all"]), *part["by_steps"].items()]:
            lines.append(f"| {name} | {steps} | {sum(counts.values())} | "
                         + " | ".join(str(counts[k]) for k in KINDS) + " |")
    lines += [f"\n{name}: {part['slips_in_right_plans']} of {part['all']['arithmetic slip']} slips are in a plan that "
              "reaches the answer once computed correctly" for name, part in result["sets"].items()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
