"""Watermark methods side by side (bench/watermark_compare.py): IPMark, keyed KGW, transformers' KGW, SynthID."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, num, table


def _cell(row: dict | None) -> str | None:
    return None if row is None else f"{row['auc']:.3f} / {row['tpr_1']:.2f}"


def compare(ctx: Ctx) -> Body:
    r = ctx.load("watermark_compare.json")
    lines, commands = [], []
    for model_id, m in r["models"].items():
        det: dict[str, dict[str, dict]] = {}
        for x in m["detection"]:
            det.setdefault(x["condition"], {})[x["method"]] = x
        methods = list(dict.fromkeys(x["method"] for x in m["detection"]))
        clean = det["clean"]
        first = clean[methods[0]]
        lines += [f"**{m['model']}**: {m['prompts']} prompts × {m['sentences']} sentences per method "
                  f"({first['n_pos']} watermarked texts per method and condition, {first['n_neg']} negatives: the "
                  f"{m['prompts']} unwatermarked generations and the shipped human texts); "
                  + (f"IPMark with B = {m['ipmark_candidates']} candidates and {m['users']} users; "
                     if "ipmark" in methods else "IPMark not in this run (its generation did not fit the time "
                                                 "on the shared CPUs); ")
                  + f"CPU shared with other jobs, load average {m['load_average']:.0f} at the end; generation "
                  "seconds are wall times measured when each text was first generated (the evaluation caches texts), "
                  f"under the load of that moment. With {first['n_neg']} negatives, TPR at 1% FPR is the share of "
                  "watermarked texts scoring above every negative; with "
                  f"{first['n_pos']} positives each one moves a TPR by {1 / first['n_pos']:.2f}.", ""]
        lines += ["AUROC / TPR at 1% FPR, per condition (attacks on the watermarked texts only):", ""]
        lines += table(["condition", *methods], [[c, *[_cell(v.get(k)) for k in methods]] for c, v in det.items()])
        quality = {q["method"]: q for q in m["quality"]}
        costs = m["generation_costs"]
        lines += table(["method", "median perplexity", "own verdict: TPR / FPR (clean)", "detection per text",
                        "seconds per sentence (generation)"],
                       [[k, num(quality[k]["ppl_median"]),
                         None if k not in clean else f"{clean[k]['tpr_decision']:.2f} / {clean[k]['fpr_decision']:.2f}",
                         None if k not in clean else f"{clean[k]['detect_ms']:.0f} ms",
                         costs.get(k, {}).get("seconds_per_sentence")] for k in quality])
        commands.append(f"nice -n 15 {PY} bench/watermark_compare.py --model {model_id} --prompts {m['prompts']} "
                        f"--sentences {m['sentences']} --candidates {m['ipmark_candidates']} --users {m['users']}"
                        + (f" --methods {','.join(x for x in m['methods'] if x != 'none')}" if m.get("methods") else ""))
    return Body(lines, commands)


SECTIONS = [Section("Watermark methods side by side", ("watermark_compare.json",), compare)]
