"""Side-by-side watermark comparison (issue 34 section 5): IPMark, the keyed KGW, transformers' KGW (hf-kgw) and
SynthID-Text on the same prompts and attacks, through `backend.watermark.evaluate` (every registered method).

Per model: TPR at 1% FPR and AUROC per condition (clean and each attack), the method's own verdict rates, median
perplexity under the model, per-text detection time, seconds per generated sentence. The evaluation caches every
generation in the store, so an interrupted run resumes where it stopped. Writes bench/results/watermark_compare.json
(one entry per model; a run for one model keeps the others').

    nice -n 15 .venv/bin/python bench/watermark_compare.py --model smollm2-135m-instruct --prompts 4 --sentences 3 \
        [--methods kgw,hf-kgw,synthid] [--candidates 2]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from backend.features import load_all  # noqa: E402
from backend.models import load  # noqa: E402
from backend.watermark.evaluation import EvalConfig, evaluate, generation_costs  # noqa: E402
from backend.watermark.ipmark.config import IPMarkConfig  # noqa: E402
from backend.watermark.sampling import SamplingConfig  # noqa: E402
from output import write_result  # noqa: E402  (bench/, beside this script)

OUT = ROOT / "bench" / "results" / "watermark_compare.json"
# cheap attacks only: lm_paraphrase regenerates every text with the model (hours on 2 shared CPU cores)
ATTACKS = (("synonym_substitution", 0.3), ("word_deletion", 0.1), ("copy_paste", 0.5), ("sentence_deletion", 0.3))

load_all()


def run(model_id: str, n_prompts: int, sentences: int, candidates: int, users: int, methods: tuple) -> dict:
    handle = load(model_id)
    cfg = EvalConfig(n_prompts=n_prompts, n_users=users, sampling=SamplingConfig(max_sentences=sentences),
                     ipmark=IPMarkConfig(n_candidates=candidates), attacks=ATTACKS, methods=methods)
    start = time.perf_counter()
    done = evaluate(handle, cfg, progress=lambda f, m: print(f"[{f:4.0%}] {m}", file=sys.stderr, flush=True))
    v = done.value
    costs = generation_costs(handle, cfg)  # read from the cached generations
    return {"model": v.model_name, "model_id": model_id, "prompts": n_prompts, "sentences": sentences,
            "ipmark_candidates": candidates, "users": v.n_users,
            "methods": [m.name for m in cfg.compared()], "attacks": [list(a) for a in ATTACKS],
            "seconds": round(time.perf_counter() - start, 1), "provenance": done.provenance,
            "quality": [q.__dict__ for q in v.quality], "detection": [d.__dict__ for d in v.detection],
            "generation_costs": costs, "load_average": os.getloadavg()[0],
            "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--prompts", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=4)
    parser.add_argument("--candidates", type=int, default=4, help="IPMark's B")
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--methods", default="", help="comma-separated methods to compare (default: all registered)")
    args = parser.parse_args()
    previous = json.loads(OUT.read_text()) if OUT.exists() else {"models": {}}
    methods = tuple(m for m in args.methods.split(",") if m)
    previous["models"][args.model] = run(args.model, args.prompts, args.sentences, args.candidates, args.users,
                                         methods)
    write_result(OUT, previous)


if __name__ == "__main__":
    main()
