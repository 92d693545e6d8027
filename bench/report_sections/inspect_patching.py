"""Inspect patching: agreement with TransformerLens' patching functions, and the speed ratio."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table, times


def inspect_patching(ctx: Ctx) -> Body:
    r = ctx.load("inspect_patching.json")
    v = r["versions"]
    lines = ["`inspect patch` (clean → corrupted, normalised logit difference: corrupted 0, clean 1) against "
             f"TransformerLens {v['transformer_lens']}'s `patching.get_act_patch_*` (TransformerBridge in compatibility "
             "mode, one forward per patch) with the same token ids and metric, both in one process at "
             f"{r['torch_threads']} torch threads (load average {r['load_average']:.1f}; torch {v['torch']}, "
             f"transformers {v['transformers']}). Ours batches the patched runs and prefills the corrupted prefix "
             "once per patched position (backend/inspect/patching.py). Seconds: the whole computation on each side "
             f"(ours uncached); target ≥ {r['target_speedup']:g}× on the 16-token prompt's resid_pre.", ""]
    rows = []
    for model, m in r["models"].items():
        for x in m["rows"]:
            if "site" not in x:
                rows.append([model, x["clean"], "–", f"skipped: {x['skipped']}", None, None, None])
                continue
            rows.append([model, f"{x['clean']} ({x['tokens']} tokens)", x["site"], f"{x['max_abs_diff']:.1e}",
                         sec(x["ours_s"], 2), sec(x["transformerlens_s"], 2), times(x["speedup"], 1)])
    lines += table(["model", "clean prompt", "site", "largest |difference|", "ours", "TransformerLens", "speed-up"],
                   rows)
    t = r["verb_timings"]
    lines += [f"`inspect patch` through the store on {t['model']} (targets: computed ≤ {t['targets']['computed_s']:g} s, "
              f"cached ≤ {t['targets']['cached_s']:g} s):", ""]
    lines += table(["site", "computed", "cached"],
                   [[x["site"], sec(x["computed_s"], 2), sec(x["cached_s"], 3)] for x in t["rows"]])
    return Body(lines, [r["command"]])


SECTIONS = [Section("Inspect patching against TransformerLens", ("inspect_patching.json",), inspect_patching)]
