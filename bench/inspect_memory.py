"""Inspect's memory against the prompt's length: peak RSS of `inspect attention` (one layer's pattern kept) and of
the logit lens at 1k, 2k and 8k tokens on SmolLM2, each in a fresh process, beside the estimate the verbs check
before any forward (backend/internals/budget.py) and, at 1k and 2k, the previous way (every layer's pattern kept via
`output_attentions`). Over the budget a verb refuses: the row says so and the raised-budget row measures it anyway.

Run: .venv/bin/python bench/inspect_memory.py  (writes bench/results/inspect_memory.json)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "inspect_memory.json"
MODEL = "smollm2-135m-instruct"
CHILD = """
import json, resource, sys
from backend.errors import UserError
from backend.internals.attention import compute_attention
from backend.internals.budget import estimate
from backend.internals.config import AttentionConfig, LensConfig
from backend.internals.lens import compute_lens
from backend.internals.prompt import encode
from backend.models import load
from backend.models.hooks import capture

how, model_id, tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
handle = load(model_id)
tok = handle.tokenizer
words = tok("The quick brown fox jumps over the lazy dog while the river runs on. ", add_special_tokens=False)
ids, n = words["input_ids"] * (tokens // len(words["input_ids"]) + 20), tokens
for _ in range(12):  # decoding then encoding merges a few tokens: lengthen until the prompt is `tokens` long
    prompt = tok.decode(ids[:n])
    n += tokens - len(tok(prompt)["input_ids"])
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
loaded, load_peak = rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
estimated = estimate(handle.model, len(tok(prompt)["input_ids"]), 0 if how == "lens" else 1, how == "lens")
try:
    if how == "attention":
        result = compute_attention(handle.model, tok, AttentionConfig(prompt=prompt, layer=15, head=3))
        outcome = f"computed ({len(result.tokens):,} tokens)"
    elif how == "lens":
        result = compute_lens(handle.model, tok, LensConfig(prompt=prompt, top_k=5))
        outcome = f"computed ({len(result.tokens):,} tokens)"
    else:  # the previous way: every layer's probabilities kept by output_attentions, then one read
        encoded = encode(handle.model, tok, prompt)
        pattern = capture(handle.model, encoded.ids, attentions=True).attentions[15][0, 3]
        outcome = f"computed ({pattern.shape[0]:,} tokens)"
except UserError as err:
    outcome = f"refused: {err}"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"loaded_rss_mb": round(loaded), "load_peak_rss_mb": round(load_peak), "peak_rss_mb": round(peak),
                  "over_loaded_mb": round(max(0.0, peak - loaded)), "estimate": estimated.to_json(),
                  "outcome": outcome}))
"""
CASES = [("attention", 1000, None), ("attention", 2000, None), ("attention", 8000, None),
         ("attention", 8000, 16384), ("lens", 1000, None), ("lens", 8000, None),
         ("all_layers", 1000, None), ("all_layers", 2000, None)]


def measure(how: str, tokens: int, budget_mb: int | None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if budget_mb is not None:
        env["DASH_INSPECT_MAX_MB"] = str(budget_mb)
    out = subprocess.run([sys.executable, "-c", CHILD, how, MODEL, str(tokens)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        return {"how": how, "tokens": tokens, "budget_mb": budget_mb,
                "outcome": f"process ended with {out.returncode}: {out.stderr.strip().splitlines()[-1:]}"}
    return {"how": how, "tokens": tokens, "budget_mb": budget_mb, **json.loads(out.stdout.strip().splitlines()[-1])}


def main() -> None:
    from backend.config import settings

    rows = []
    for how, tokens, budget in CASES:
        rows.append(measure(how, tokens, budget))
        print(json.dumps(rows[-1]), flush=True)
    by = {(r["how"], r["tokens"], r["budget_mb"]): r for r in rows}
    ratio = {f"{t}": round(by[("all_layers", t, None)]["over_loaded_mb"] / max(1, by[("attention", t, None)]
                                                                                 ["over_loaded_mb"]), 1)
             for t in (1000, 2000) if "over_loaded_mb" in by[("all_layers", t, None)]}
    report = {"model": MODEL, "default_budget_mb": round(settings().inspect_max_bytes / 2**20),
              "cpus": os.cpu_count(), "load_average": round(os.getloadavg()[0], 2), "rows": rows,
              "all_layers_over_one_layer": ratio, "command": ".venv/bin/python bench/inspect_memory.py"}
    RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
