"""Inspect patching: agreement with TransformerLens' patching functions, and the speed ratio."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table, times


def inspect_patching(ctx: Ctx) -> Body:
    r = ctx.load("inspect_patching.json")
    v = r["versions"]
    lines = ["`inspect patch` (clean → corrupted, normalised logit difference: corrupted 0, clean 1) against "
             f"TransformerLens {v['transformer_lens']}'s `patching.get_act_patch_*` (TransformerBridge in compatibility "
             "mode, one forward per patch) with the same token ids and metric, both in one process at "
             f"{r['torch_threads']} torch threads (torch {v['torch']}, "
             f"transformers {v['transformers']}). Ours batches the patched runs and prefills the corrupted prefix "
             "once per patched position (backend/internals/patching.py). Seconds: the whole computation on each side "
             "(ours computed, then cached through the store).", ""]
    rows = []
    for model, m in r["models"].items():
        lines.append(f"- {model}: load average {m.get('load_average', r['load_average']):.1f} when measured")
    lines.append("")
    for model, m in r["models"].items():
        for x in m["rows"]:
            if "site" not in x:
                rows.append([model, x["clean"], "–", f"skipped: {x['skipped']}", None, None, None, None])
                continue
            run = "" if x["tl_cells_run"] == x["cells"] else f" ({x['tl_cells_run']} of {x['cells']} cells run, scaled)"
            rows.append([model, f"{x['clean']} ({x['tokens']} tokens)", x["site"], f"{x['max_abs_diff']:.1e}",
                         sec(x["ours_s"], 1), sec(x["ours_cached_s"], 3),
                         sec(x["transformerlens_every_cell_s"], 1) + run, times(x["speedup"], 1)])
    lines += table(["model", "clean prompt", "site", "largest abs. difference", "ours computed", "ours cached",
                    "TransformerLens", "speed-up"], rows)
    lines += [f"Targets on SmolLM2 at 2 threads: computed ≤ {r['targets_s']['computed']:g} s, cached ≤ "
              f"{r['targets_s']['cached']:g} s, speed-up ≥ {r['target_speedup']:g}× on resid_pre. Absolute seconds "
              "depend on the machine's load (its load average is recorded above); the speed-up is measured in the same "
              "process, the two sides one after the other for each site." +
              ("" if len(r["models"]) > 1 else " Only this model was compared."), ""]
    return Body(lines, sorted({m.get("command", r["command"]) for m in r["models"].values()}))


SECTIONS = [Section("Inspect patching against TransformerLens", ("inspect_patching.json",), inspect_patching)]
