"""`inspect attribute` against inseq: the same method, model, prompt and targets on both sides.

Our three methods against inseq's counterparts (inseq 0.7 in a scratch venv, bench/inspect_inseq_side.py, run in a
subprocess like the TransformerLens comparison), on the embedded SmolLM2 and Gemma 3 270M, f = the target's
probability (inseq's default attributed function):
- saliency (gradient × input, captum InputXGradient) ↔ inseq `input_x_gradient`, summed over the embedding;
- integrated_gradients (captum LayerIntegratedGradients, 32 steps) ↔ inseq `integrated_gradients`, 32 steps, its
  baseline (the unk token's embedding, as ours), summed over the embedding;
- ablation (captum FeatureAblation, the token replaced by the baseline token) ↔ inseq `occlusion` (captum Occlusion
  of one token's whole embedding by the baseline's), which reports |f(input) − f(occluded)|: compared in absolute value.
Each case is one prompt's next token (the model's prediction) and a 4-token greedy continuation from the kernel
(each token against the prompt and the tokens before it). Seconds are each side's own wall time per case, measured
one after the other in two processes at 2 torch threads (indicative, not a race).

    python3.11 -m venv /tmp/inseqvenv   # + a .pth to the project's site-packages, then:
    /tmp/inseqvenv/bin/pip install inseq==0.7.1
    .venv/bin/python bench/inspect_vs_inseq.py --inseq-python /tmp/inseqvenv/bin/python
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.internals.attribution import compute_attribution  # noqa: E402
from backend.internals.config import AttributeConfig  # noqa: E402
from backend.models import load  # noqa: E402
from backend.models.embedded import cache_dir_for  # noqa: E402
from bench.output import write_result  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "inspect_inseq.json"
MODELS = ("smollm2-135m-instruct", "gemma-3-270m")
CASES = (("The Eiffel Tower is located in the city of", 0), ("When Mary and John went to the store, John gave a drink to", 4))
STEPS = 32
THEIRS = {"saliency": ("input_x_gradient", {}),
          "integrated_gradients": ("integrated_gradients", {"n_steps": STEPS, "internal_batch_size": 16}),
          "ablation": ("occlusion", {})}
ABSOLUTE = {"ablation"}  # inseq's occlusion reports magnitudes


def ours(handle, prompt: str, generate: int, method: str):
    start = time.perf_counter()
    result = compute_attribution(handle.model, handle.tokenizer, AttributeConfig(
        prompt=prompt, method=method, generate=generate, function="probability", steps=STEPS))
    return result, time.perf_counter() - start


def compare(mine, theirs: dict, ids: list[int], method: str) -> dict:
    """Largest differences over every (target, source) pair both sides score, and the scale they are read at."""
    offset = len(theirs["ids"]) - len(ids)  # a BOS inseq shows and the prompt's ids hold is matched by its ids
    same_tokens = theirs["ids"][offset:] == ids
    n_sources = mine.scores.shape[1]
    got = np.array([[np.nan if v is None else v for v in row] for row in theirs["scores"]], dtype=float)
    got = got[:, offset:offset + n_sources]
    want = np.abs(mine.scores) if method in ABSOLUTE else mine.scores
    both = np.isfinite(want) & np.isfinite(got)
    return {"same_tokens": bool(same_tokens), "pairs": int(both.sum()),
            "max_abs_diff": float(np.abs(want - got)[both].max()), "max_abs_score": float(np.abs(want[both]).max()),
            "probability_max_abs_diff": float(np.abs(mine.f_input - np.array(theirs["probability"])).max()),
            "ig_delta": mine.delta}


def against_inseq(inseq_python: str, models=MODELS, done=lambda out: None, prompts=CASES) -> dict:
    """Model by model; `done(out)` after each, so a long run keeps what it has measured."""
    torch.set_num_threads(2)
    out = {}
    for model_id in models:
        handle = load(model_id)
        mine, cases = {}, []
        for prompt, generate in prompts:
            for method in THEIRS:
                mine[(prompt, method)] = ours(handle, prompt, generate, method)
            first = mine[(prompt, "saliency")][0]
            cases.append({"prompt": prompt, "continuation": "".join(first.targets)})
        with tempfile.TemporaryDirectory() as tmp:
            request, answer = Path(tmp) / "request.json", Path(tmp) / "answer.json"
            request.write_text(json.dumps({"model_dir": str(cache_dir_for(model_id)), "cases": cases, "threads": 2,
                                           "methods": {theirs: args for theirs, args in THEIRS.values()}}))
            ran = subprocess.run([inseq_python, str(ROOT / "bench" / "inspect_inseq_side.py"), str(request),
                                   str(answer)], capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
            if ran.returncode != 0:
                out[model_id] = {"error": ran.stderr.strip().splitlines()[-1] if ran.stderr.strip() else "failed"}
                continue
            answered = json.loads(answer.read_text())
        by_key = {(a["prompt"], a["method"]): a for a in answered["cases"]}
        rows = []
        for (prompt, method), (result, seconds) in mine.items():
            theirs = by_key[(prompt, THEIRS[method][0])]
            ids = list(handle.tokenizer(prompt)["input_ids"]) + list(result.target_ids)
            rows.append({"prompt": prompt, "method": method, "inseq_method": THEIRS[method][0],
                         "targets": list(result.targets), **compare(result, theirs, ids, method),
                         "our_seconds": round(seconds, 2), "inseq_seconds": round(theirs["seconds"], 2)})
        out[model_id] = {"versions": {k: answered[k] for k in ("inseq", "captum", "torch", "transformers")},
                         "rows": rows}
        done(out)
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inseq-python", default="/tmp/inseqvenv/bin/python",
                        help="python of a scratch environment with inseq installed")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated registry ids")
    parser.add_argument("--cases", type=int, default=len(CASES), help="the first N cases only (a shorter run)")
    args = parser.parse_args(argv)
    result = {"command": ".venv/bin/python bench/inspect_vs_inseq.py --inseq-python /tmp/inseqvenv/bin/python",
              "load_average": os.getloadavg()[0], "steps": STEPS, "inseq": {}}
    # a run of some models keeps the stored results of the others
    kept = json.loads(RESULTS.read_text())["inseq"] if RESULTS.exists() else {}

    def done(out: dict) -> None:
        write_result(RESULTS, {**result, "inseq": {**kept, **out}, "load_average": os.getloadavg()[0]})

    out = against_inseq(args.inseq_python, args.models.split(","), done, CASES[:args.cases])
    return write_result(RESULTS, {**result, "inseq": {**kept, **out}, "load_average": os.getloadavg()[0]})


if __name__ == "__main__":
    main()
