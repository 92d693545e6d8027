"""Inspect against TransformerLens, and the drill-downs' timings.

1. `inspect lens`, `inspect dla` and `inspect attention` (the project's compute functions) against TransformerLens 4
   (TransformerBridge in compatibility mode, bench/inspect_tl_side.py, run in a scratch venv given by --tl-python)
   on the embedded SmolLM2 and Gemma 3 270M, same token ids: largest differences of lens probabilities (top-k),
   per-head / per-attention-block / per-MLP direct logit attribution (target minus contrast), attention patterns.
2. Drill-down timings on the embedded default model at 2 torch threads, through the cached verbs on a fresh store:
   computed (first request) and cached (the same request again); and in Chromium on the app, from a click on a head
   of the attribution map to its drill-down drawn.

    python3.11 -m venv /tmp/tlvenv   # + a .pth to the project's site-packages, then:
    /tmp/tlvenv/bin/pip install transformer-lens==4.3.0
    .venv/bin/python bench/inspect_vs_transformerlens.py --tl-python /tmp/tlvenv/bin/python
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
os.environ.setdefault("DASH_STORE", str(Path(tempfile.mkdtemp(prefix="inspect-bench-")) / "store.duckdb"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.internals import AttentionConfig, DlaConfig, HeadConfig, LensConfig, attention, dla, head, lens  # noqa: E402
from backend.internals.attention import compute_attention  # noqa: E402
from backend.internals.dla import compute_dla  # noqa: E402
from backend.internals.lens import compute_lens  # noqa: E402
from backend.models import load  # noqa: E402
from backend.models.embedded import cache_dir_for  # noqa: E402
from bench.output import write_result  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "inspect_tl.json"
MODELS = {"smollm2-135m-instruct": "LlamaForCausalLM", "gemma-3-270m": "Gemma3ForCausalLM"}
CASES = (("The Eiffel Tower is located in the city of", " Paris", " London"),
         ("When Mary and John went to the store, John gave a drink to", " Mary", " John"),
         ("The capital of Germany is", " Berlin", " Munich"))
TOP_K = 5


def ours(handle, prompt: str, target: str, contrast: str) -> dict:
    model, tokenizer = handle.model, handle.tokenizer
    lens_result = compute_lens(model, tokenizer, LensConfig(prompt=prompt, top_k=TOP_K))
    dla_result = compute_dla(model, tokenizer, DlaConfig(prompt=prompt, target=target, contrast=contrast))
    heads = [(layer, h) for layer in range(handle.info.n_layers) for h in sorted({0, handle.info.n_heads - 1})]
    patterns = {f"{l},{h}": compute_attention(model, tokenizer, AttentionConfig(prompt=prompt, layer=l, head=h)).pattern
                for l, h in heads}
    return {"lens": lens_result, "dla": dla_result, "patterns": patterns, "heads": heads}


def compare(mine: dict, theirs: dict) -> dict:
    lens_result, dla_result = mine["lens"], mine["dla"]
    tl_ids, tl_probs = np.array(theirs["lens_top_ids"]), np.array(theirs["lens_top_probs"])
    tl_heads = np.array(theirs["dla_heads"])
    block_attn = dla_result.heads.sum(axis=1)  # no attention biases in these models
    pattern_diff = max(float(np.abs(mine["patterns"][k] - np.array(v)).max()) for k, v in theirs["patterns"].items())
    return {"tokens": len(lens_result.tokens), "lens_layers": lens_result.n_layers + 1,
            "lens_max_abs_prob_diff": float(np.abs(lens_result.top_probs - tl_probs).max()),
            "lens_top1_agreement": float((lens_result.top_ids[..., 0] == tl_ids[..., 0]).mean()),
            "dla_logit_diff": dla_result.logit, "dla_sum_of_parts_error": abs(dla_result.total - dla_result.logit),
            "dla_heads_max_abs_diff": float(np.abs(dla_result.heads - tl_heads).max()),
            "dla_heads_max_abs": float(np.abs(dla_result.heads).max()),
            "dla_attn_blocks_max_abs_diff": float(np.abs(block_attn - np.array(theirs["dla_attn"])).max()),
            # TransformerLens' own heads against its own blocks: do its per-head values add up to the block?
            "tl_heads_sum_vs_tl_block_max_abs_diff": float(np.abs(tl_heads.sum(axis=1)
                                                                  - np.array(theirs["dla_attn"])).max()),
            "dla_mlps_max_abs_diff": float(np.abs(dla_result.mlps - np.array(theirs["dla_mlps"])).max()),
            "attention_heads_compared": len(theirs["patterns"]), "attention_max_abs_diff": pattern_diff}


def against_transformerlens(tl_python: str) -> dict:
    out = {}
    for model_id, architecture in MODELS.items():
        handle = load(model_id)
        mine, cases = [], []
        for prompt, target, contrast in CASES:
            found = ours(handle, prompt, target, contrast)
            mine.append(found)
            cases.append({"ids": handle.tokenizer(prompt)["input_ids"], "position": -1,
                          "target": found["dla"].target_id, "contrast": found["dla"].contrast_id,
                          "heads": found["heads"]})
        with tempfile.TemporaryDirectory() as tmp:
            request, answer = Path(tmp) / "request.json", Path(tmp) / "answer.json"
            request.write_text(json.dumps({"model_dir": str(cache_dir_for(model_id)), "architecture": architecture,
                                           "cases": cases, "top_k": TOP_K, "threads": 2}))
            done = subprocess.run([tl_python, str(ROOT / "bench" / "inspect_tl_side.py"), str(request), str(answer)],
                                  capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
            if done.returncode != 0:
                out[model_id] = {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
                continue
            theirs = json.loads(answer.read_text())
        rows = [{"prompt": prompt, "target": target, "contrast": contrast, **compare(m, t)}
                for (prompt, target, contrast), m, t in zip(CASES, mine, theirs["cases"])]
        out[model_id] = {"versions": {k: theirs[k] for k in ("transformer_lens", "torch", "transformers")},
                         "cases": rows, **{f"max_{k}": max(r[k] for r in rows) for k in (
                             "lens_max_abs_prob_diff", "dla_heads_max_abs_diff", "dla_attn_blocks_max_abs_diff",
                             "dla_mlps_max_abs_diff", "attention_max_abs_diff", "dla_sum_of_parts_error",
                             "tl_heads_sum_vs_tl_block_max_abs_diff")},
                         "min_lens_top1_agreement": min(r["lens_top1_agreement"] for r in rows)}
    return out


def timed(call) -> tuple[object, float]:
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


EMBEDDED = "smollm2-135m-instruct"


def drilldown_timings(model_id: str = EMBEDDED, threads: int = 2) -> dict:
    torch.set_num_threads(threads)
    handle = load(model_id)
    prompt = "When Mary and John went to the store, John gave a drink to"
    requests = [("lens", lambda: lens(handle, LensConfig(prompt=prompt))),
                ("dla", lambda: dla(handle, DlaConfig(prompt=prompt))),
                ("attention", lambda: attention(handle, AttentionConfig(prompt=prompt, layer=5, head=3)))]
    requests += [(f"head L{l}H{h}", lambda l=l, h=h: head(handle, HeadConfig(prompt=prompt, layer=l, head=h)))
                 for l, h in ((29, 1), (23, 4), (10, 0))]
    rows = []
    for name, call in requests:
        first, computed = timed(call)
        again, cached = timed(call)
        assert not first.cached and again.cached
        rows.append({"request": name, "computed_s": round(computed, 3), "cached_s": round(cached, 3)})
    head_rows = [r for r in rows if r["request"].startswith("head")]
    return {"model": model_id, "torch_threads": threads, "load_average": os.getloadavg()[0], "rows": rows,
            "max_head_computed_s": max(r["computed_s"] for r in head_rows),
            "max_head_cached_s": max(r["cached_s"] for r in head_rows),
            "max_computed_s": max(r["computed_s"] for r in rows), "max_cached_s": max(r["cached_s"] for r in rows),
            "targets": {"cached_s": 2.0, "computed_s": 10.0}}


def page_click_timings(heads=((29, 1), (23, 4), (10, 0), (29, 1), (23, 4))) -> dict:
    """In Chromium on the app (embedded default model, a fresh store with the shipped reference): open Inspect, open
    its attribution tab, click heads on the map; seconds from the click to the drill-down drawn (script idle, charts
    drawn). A head clicked again after another one is served from the store."""
    from playwright.sync_api import sync_playwright

    from app import server
    from app.server import CHROMIUM, CHROMIUM_FLAGS, running_app

    env = {**os.environ, "DASH_STORE": str(Path(tempfile.mkdtemp(prefix="inspect-clicks-")) / "store.duckdb")}
    rows = []
    with running_app(env=env, start_timeout_s=180) as (url, _), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.set_default_timeout(300_000)
        page.goto(f"{url}/inspect")
        server.wait_until_idle(page, 300)
        server.rerun_after(page, page.get_by_role("tab", name="Direct logit attribution").click, 300)
        server.wait_for_charts(page, 120)
        n_heads = load(EMBEDDED).info.n_heads
        seen = set()
        for layer, h in heads:
            point = page.locator(".js-plotly-plot").first.locator("g.scatterlayer path.point").nth(layer * n_heads + h)
            box = point.bounding_box()
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            page.mouse.move(x, y)
            page.wait_for_function(server.PICKED_UNDER, arg=[x, y], polling=50)  # Plotly picked the head to click
            start = time.perf_counter()
            page.mouse.click(x, y)
            page.wait_for_function(f"document.body.innerText.includes('Head L{layer}H{h}') && {server.RERUN_DONE}",
                                   polling=50)
            server.wait_for_charts(page, 120)
            rows.append({"head": f"L{layer}H{h}", "from_store": (layer, h) in seen,
                         "seconds": round(time.perf_counter() - start, 3)})
            seen.add((layer, h))
        browser.close()
    return {"model": EMBEDDED, "load_average": os.getloadavg()[0], "rows": rows,
            "max_computed_s": max(r["seconds"] for r in rows if not r["from_store"]),
            "max_cached_s": max(r["seconds"] for r in rows if r["from_store"])}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tl-python", default="/tmp/tlvenv/bin/python",
                        help="python of a scratch environment with transformer-lens installed")
    parser.add_argument("--timings-only", action="store_true",
                        help="measure the drill-down timings again and keep the stored TransformerLens comparison")
    args = parser.parse_args(argv)
    timings = drilldown_timings()  # first: the timings are the page's, before the comparison loads Gemma
    clicks = page_click_timings()
    compared = (json.loads(RESULTS.read_text())["transformerlens"] if args.timings_only
                else against_transformerlens(args.tl_python))
    result = {"command": ".venv/bin/python bench/inspect_vs_transformerlens.py --tl-python /tmp/tlvenv/bin/python",
              "drilldown_timings": timings, "page_clicks": clicks, "transformerlens": compared}
    return write_result(RESULTS, result)


if __name__ == "__main__":
    main()
