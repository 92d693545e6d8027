"""What kind of miss each wrong greedy answer of a model is, per problem set and number of steps.

Greedy decodes go through the store with the decoding benchmark's settings (96 new tokens, the chat
prompt), so after `bench/decoding_accuracy.py` this reads its runs instead of decoding again. Kinds
(backend.tasks.solution_errors): no answer, arithmetic slip (a written equation is false), too few
steps, wrong plan (every equation true, answer wrong).

Usage: .venv/bin/python bench/reasoning_errors.py [--model smollm2-135m-arith-reasoner] [--heldout 100]
           [--handwritten 60] [--threads 2]
Writes bench/results/reasoning_errors.json and prints the table the model card quotes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m-arith-reasoner")
    ap.add_argument("--heldout", type=int, default=100, help="problems from the generator's broad held-out split")
    ap.add_argument("--handwritten", type=int, default=60, help="problems of the hand-written set, evenly spread")
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "reasoning_errors.json"))
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from backend.decoding import DecodeConfig
    from backend.decoding.run import decode, settings_for
    from backend.features import load_all
    from backend.models import load
    from backend.tasks.problem_sets import evenly_spread, handwritten_problems, problem_set
    from backend.tasks.solution_errors import MISS_KINDS, classify, tally

    load_all()
    handle = load(args.model)
    # the decoding benchmark's greedy setting, so its stored runs are found
    base = DecodeConfig(max_new_tokens=args.tokens, alpha=4.0, n=4, block_size=16, mh_steps=1, temperature=1.0)
    greedy = settings_for([base.replace(strategy="greedy")])[0].config
    sets = {"broad held-out": problem_set("broad", args.heldout),
            "hand-written": evenly_spread(handwritten_problems(), args.handwritten)}
    result: dict = {"model": handle.display_name, "model_id": args.model, "fingerprint": handle.fingerprint,
                    "command": " ".join([".venv/bin/python bench/reasoning_errors.py", *sys.argv[1:]]), "sets": {}}
    for name, problems in sets.items():
        kinds, examples = [], {}
        for i, problem in enumerate(problems):
            reply = decode(handle, problem, greedy).value.output
            kind = classify(problem, reply)
            kinds.append((problem.difficulty, kind))
            examples.setdefault(kind, {"question": problem.question, "answer": problem.answer, "reply": reply})
            print(f"{name} {i + 1}/{len(problems)}: {kind}", file=sys.stderr, flush=True)
        steps = sorted({d for d, _ in kinds})
        result["sets"][name] = {
            "n": len(problems), "all": tally([k for _, k in kinds]),
            "by_steps": {str(d): tally([k for s, k in kinds if s == d]) for d in steps},
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
    return "\n".join(lines)


if __name__ == "__main__":
    main()
