"""How much of the hand-written evaluation set's wording each training family can produce.

The hand-written problems (data/arith/handwritten.jsonl) measure generalisation beyond the generator's
wording, so a family written after reading the adapter's misses on them must be checked for drawing closer
to them. For each hand-written question: the share of its word 4-grams (digits left out) that occur in any
of --n training problems of the family; reported as the mean and the questions (0-based line numbers) above 50%.

Usage: .venv/bin/python bench/handwritten_overlap.py [--families broad,extended,everyday] [--n 4000]
Writes bench/results/handwritten_overlap.json.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.tasks.arithmetic import generate_problems  # noqa: E402
from backend.tasks.problem_sets import handwritten_problems  # noqa: E402


def word_grams(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z]+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="broad,extended,everyday")
    ap.add_argument("--n", type=int, default=4000, help="training problems drawn per family")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "handwritten_overlap.json"))
    args = ap.parse_args()
    questions = [p.question for p in handwritten_problems()]
    out = {"handwritten": len(questions), "train_problems": args.n, "gram": 4,
           "command": " ".join([".venv/bin/python bench/handwritten_overlap.py", *sys.argv[1:]]), "families": {}}
    for family in args.families.split(","):
        seen = set().union(*(word_grams(p.question) for p in generate_problems(args.n, "train", 0, family=family)))
        shares = [len(g & seen) / len(g) if g else 0.0 for g in map(word_grams, questions)]
        out["families"][family] = {"mean_share": round(sum(shares) / len(shares), 3),
                                   "above_half": [i for i, s in enumerate(shares) if s > 0.5]}
        print(family, out["families"][family], flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
