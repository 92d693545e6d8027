"""MT heads: SmolLM2 EN->FR and the Gemma-3-270M steering sweeps."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, clean_command, num, pct, sec, table

# The first Gemma grid merged rows from several runs whose other outputs are gone: no one command gives it.
NOT_REPRODUCIBLE = {"mt_gemma.json"}
FLAGS = ("pairs", "sentences", "prompts", "percents", "strengths", "modes", "positions", "layers", "ablate_types",
         "top", "random_draws", "threads", "designs_from")


def smollm2(ctx: Ctx) -> Body:
    r = ctx.load("mt.json")
    ev = r["evaluation"]
    rows = [[c["condition"], num(c["chrF++"], 1), num(c["target-language rate"])] for c in ev["table"]]
    rows += [[s["condition"], num(s["chrF++"], 1), num(s["target-language rate"])]
             for s in (ev.get("wide_add_steering"), ev.get("patch_steering")) if s]
    lines = [f"{r['model']}, {r['pair']}, {ev['sentences']} held-out sentences of the {r['data']}.", ""]
    lines += table(["condition", "chrF++", "French rate"], rows)
    lines += table(["head type", "patching vs attribution (Spearman)", "top-1% overlap", "attribution speed-up",
                    "patching / attribution time"],
                   [[k, num(h["spearman_patching_vs_attribution"]), pct(h["top_percent_overlap"], 0),
                     f"{h['attribution_speedup']}×",
                     f"{sec(h['patching_seconds'], 0)} / {sec(h['attribution_seconds'], 0)}"]
                    for k, h in r["heads"].items()])
    a = ev["ablation"]
    lines += [f"Zeroing the language heads drops the French rate by {num(a['language']['rate_drop_mean'])}, "
              f"{int(a['random']['draws'])} draws of as many random heads by {num(a['random']['rate_drop_mean'])}.", ""]
    cmd = f"{PY} bench/mt.py --sentences {ev['sentences']}" + (f" --threads {r['threads']}" if r.get("threads") else "")
    if r.get("steering_sweep_10_sentences"):
        cmd += " --sweep"
    return Body(lines, [cmd])


def _design(s: dict) -> str:
    return (f"{s['steer_mode']}, {s['heads']} heads ({s['percent']:g}%), ×{s['strength']:g}, {s['steer_positions']}, "
            f"{s['steer_layers']} layers")


def gemma(ctx: Ctx) -> Body:
    lines, cmds = [], []
    for path in ctx.glob("mt_gemma*.json"):
        if path.name in NOT_REPRODUCIBLE:
            continue
        r = ctx.load(path.name)
        lines += [f"**`{path.name}`**: {r['model']}, {r['sentences']} held-out sentences per pair, {r['heads_total']} "
                  "heads. Gap recovered = (steered − instruction-free) / (few-shot − instruction-free); degeneration = "
                  "share of repeated word bigrams.", ""]
        rows = []
        for pair, p in r["pairs"].items():
            b = p["baselines"]
            for s in sorted(p.get("sweep", []), key=lambda s: -s["gap_recovered"]):
                rows.append([pair, _design(s), f"**{pct(s['gap_recovered'], 0)}**" if s.get("meets_target")
                             else pct(s["gap_recovered"], 0), num(s["chrf"], 1),
                             f"{num(b['instruction-free']['chrf'], 1)} / {num(b['few-shot']['chrf'], 1)}",
                             num(s["target_rate"]),
                             f"{num(s['degeneration'], 3)} ({num(b['few-shot']['degeneration'], 3)})"])
        lines += table(["pair", "design", "gap recovered", "chrF++", "chrF++ free / few-shot", "target-language rate",
                        "degeneration (few-shot's)"], rows)
        abl = [[pair, k, num(a["rate_drop"]), num(a["random_rate_drop"])]
               for pair, p in r["pairs"].items() for k, a in p.get("ablation", {}).items()]
        if abl:
            lines += table(["pair", "heads zeroed (few-shot)", "target-language rate drop", "random heads' drop"], abl)
        if r.get("command"):
            cmds.append(clean_command(r["command"], ctx.root))
        else:
            s = r["settings"]
            cmds.append(f"{PY} bench/mt_gemma.py " + " ".join(
                f"--{k.replace('_', '-')} {s[k] if s[k] != '' else chr(34) * 2}" for k in FLAGS if k in s)
                + f" --out bench/results/{path.name}")
    lines += ["A bold gap meets the target (≥ 50% of the gap, degeneration no higher than few-shot's).", ""]
    return Body(lines, cmds)


SECTIONS = [
    Section("MT heads on SmolLM2-135M", ("mt.json",), smollm2),
    Section("MT heads on Gemma-3-270M", ("mt_gemma*.json",), gemma),
]
