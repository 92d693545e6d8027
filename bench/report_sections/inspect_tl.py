"""Inspect: agreement with TransformerLens, and the drill-downs' timings."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, pct, sec, table


def _sci(x: float) -> str:
    return f"{x:.1e}"


def inspect_tl(ctx: Ctx) -> Body:
    r = ctx.load("inspect_tl.json")
    lines = ["`inspect lens`, `inspect dla` and `inspect attention` against TransformerLens (TransformerBridge in "
             "compatibility mode, in a scratch venv; bench/inspect_tl_side.py), same token ids, 3 prompts per model; "
             "DLA is target minus contrast (TransformerLens centres W_U, which a difference cancels). Largest "
             "absolute differences:", ""]
    rows = []
    for model, m in r["transformerlens"].items():
        if "error" in m:
            rows.append([model, f"TransformerLens failed: {m['error']}", None, None, None, None, None])
            continue
        rows.append([model, f"{_sci(m['max_lens_max_abs_prob_diff'])} (top-1 agreement "
                            f"{pct(m['min_lens_top1_agreement'], 1)})",
                     _sci(m["max_dla_heads_max_abs_diff"]), _sci(m["max_dla_attn_blocks_max_abs_diff"]),
                     _sci(m["max_dla_mlps_max_abs_diff"]), _sci(m["max_attention_max_abs_diff"]),
                     _sci(m["max_dla_sum_of_parts_error"])])
    lines += table(["model", "lens probabilities (top-5)", "DLA per head", "DLA per attention block", "DLA per MLP",
                    "attention patterns", "our parts vs our logit"], rows)
    versions = next((m["versions"] for m in r["transformerlens"].values() if "versions" in m), None)
    if versions:
        lines += [f"TransformerLens {versions['transformer_lens']}, torch {versions['torch']}, transformers "
                  f"{versions['transformers']}.", ""]
    gemma = r["transformerlens"].get("gemma-3-270m", {})
    if "max_dla_heads_max_abs_diff" in gemma and gemma["max_dla_heads_max_abs_diff"] > 1e-2:
        own = gemma.get("max_tl_heads_sum_vs_tl_block_max_abs_diff")
        lines += ["Gemma 3 normalises the whole attention output (post-attention RMSNorm) before the residual add. "
                  "Inspect takes each head through that norm with the scale of the full attention output, so its "
                  "heads sum exactly to the block (the per-block column agrees with TransformerLens); "
                  "TransformerLens' `stack_head_results` splits heads before that norm"
                  + (f" (its own heads miss its own blocks by up to {_sci(own)})" if own is not None else "")
                  + ", so its per-head values are not a decomposition of the block and differ from ours.", ""]
    t = r["drilldown_timings"]
    lines += [f"Drill-down timings on {t['model']} at {t['torch_threads']} torch threads through the cached verbs on a "
              f"fresh store (load average {t['load_average']:.1f}; targets: cached ≤ {t['targets']['cached_s']:g} s, "
              f"computed ≤ {t['targets']['computed_s']:g} s):", ""]
    lines += table(["request", "computed", "cached"],
                   [[x["request"], sec(x["computed_s"], 2), sec(x["cached_s"], 3)] for x in t["rows"]])
    lines += ["The first request (lens) is the first forward pass after the model loaded and pays its warm-up.", ""]
    clicks = r.get("page_clicks")
    if clicks:
        lines += [f"In the browser (Chromium, the app on {clicks['model']}, load average {clicks['load_average']:.1f}): "
                  "from a click on a head of the attribution map to its drill-down drawn:", ""]
        lines += table(["head", "served", "seconds"],
                       [[x["head"], "from the store" if x["from_store"] else "computed", sec(x["seconds"], 2)]
                        for x in clicks["rows"]])
    return Body(lines, [r["command"]])


SECTIONS = [Section("Inspect against TransformerLens, and drill-down timings", ("inspect_tl.json",), inspect_tl)]
