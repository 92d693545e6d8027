"""Inspect's memory against the prompt's length (bench/inspect_memory.py)."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, table

HOW = {"attention": "`inspect attention` (one layer's pattern kept)", "lens": "`inspect lens`",
       "all_layers": "before: every layer's pattern kept (`output_attentions`)"}


def inspect_memory(ctx: Ctx) -> Body:
    r = ctx.load("inspect_memory.json")
    lines = [f"Peak RSS of one Inspect computation on `{r['model']}`, each in a fresh process, beside the estimate the "
             "verbs check before any forward (`backend/internals/budget.py`); the budget is `DASH_INSPECT_MAX_MB` "
             f"(default a quarter of the machine: {r['default_budget_mb']:,} MB here; {r['cpus']} CPU cores, load "
             f"average {r['load_average']} at the start). \"Above the loaded model\" is the peak minus the RSS once "
             "the model was loaded. The 8k rows hold 7,801 tokens: the text repeated to 8,000 tokens merges into fewer when "
             "encoded again (SmolLM2's context is 8,192).", ""]
    rows = []
    for x in r["rows"]:
        budget = "default" if x["budget_mb"] is None else f"{x['budget_mb']:,} MB"
        if "peak_rss_mb" not in x:
            rows.append([HOW[x["how"]], f"{x['tokens']:,}", budget, None, None, None, x["outcome"]])
            continue
        estimate = None if x["how"] == "all_layers" else f"{x['estimate']['mb']:,.0f} MB"  # the estimate is today's
        rows.append([HOW[x["how"]], f"{x['estimate']['tokens']:,}", budget, f"{x['peak_rss_mb']:,} MB",
                     f"{x['over_loaded_mb']:,} MB", estimate, x["outcome"]])
    lines += table(["computation", "tokens", "budget", "peak RSS", "above the loaded model", "estimate", "outcome"],
                   rows)
    ratios = r.get("all_layers_over_one_layer") or {}
    if ratios:
        lines += ["Every layer's patterns over one layer's (memory above the loaded model): " +
                  ", ".join(f"{int(t):,} tokens {v}×" for t, v in ratios.items()) + ".", ""]
    return Body(lines, [f"{PY} bench/inspect_memory.py"])


SECTIONS = [Section("Inspect memory against prompt length", ("inspect_memory.json",), inspect_memory)]
