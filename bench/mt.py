"""MT heads on the embedded SmolLM2-135M-Instruct, EN->FR by default.

Measures side by side in one run:
- head finding: activation patching vs gradient attribution (time ratio, Spearman, top-1% overlap);
- the evaluation table on the held-out sentences (chrF++, target-language rate) for instruction,
  few-shot, instruction-free, instruction-free + steering, few-shot with language / translation /
  random heads zeroed;
- the issue's targets: steered rate >= 80% of the instruction rate; the language-head ablation lowers
  the rate at least twice as much as random heads.

Usage: .venv/bin/python bench/mt.py [--sentences 60] [--prompts 8] [--threads 1] [--sweep] [--patch-percent 5]
       [--wide-percent 5 --wide-strength 1]
Everything goes through the DuckDB store, so a rerun is served from cache (the page shows the same runs).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from backend.cli.params import add_flags  # noqa: E402
from backend.models import default_model_id, load  # noqa: E402
from backend.mt import ExperimentConfig, HeadsConfig, builtin, find_heads, run_condition, run_experiment  # noqa: E402
from backend.mt.conditions import ConditionConfig  # noqa: E402
from backend.mt.prompts import HEAD_TYPES  # noqa: E402


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def progress(prefix: str):
    state = {"last": -1.0}

    def report(fraction: float, message: str) -> None:
        if fraction - state["last"] >= 0.05 or fraction >= 1.0:
            state["last"] = fraction
            log(f"{prefix} {fraction:4.0%} {message}")

    return report


def r(x: float, n: int = 4):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), n)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None)
    add_flags(parser, HeadsConfig, {"src": "--src", "tgt": "--tgt", "n_prompts": "--prompts"})
    parser.add_argument("--sentences", type=int, default=60)
    add_flags(parser, ExperimentConfig, {"n_random": "--random", "percent": "--percent", "strength": "--strength"})
    parser.add_argument("--patch-percent", type=float, default=5.0, help="head share for the patch steering variant")
    parser.add_argument("--wide-percent", type=float, default=5.0, help="head share for the wider add-mode steering")
    parser.add_argument("--wide-strength", type=float, default=1.0, help="strength for the wider add-mode steering")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch default)")
    parser.add_argument("--sweep", action="store_true", help="also sweep steering strength on 10 sentences")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "mt.json"))
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    handle = load(args.model or default_model_id())
    data = builtin()
    heads = HeadsConfig(src=args.src, tgt=args.tgt, n_prompts=args.n_prompts)
    result: dict = {"model": handle.display_name, "pair": f"{args.src}->{args.tgt}", "data": data.name,
                    "threads": torch.get_num_threads(), "heads": {}}

    for head_type in HEAD_TYPES.names():
        config = dataclasses.replace(heads, head_type=head_type)
        out = find_heads(handle, config, data, progress(f"heads/{head_type}"))
        hm = out.value
        result["heads"][head_type] = {
            "prompts": len(hm.rows), "provenance": out.provenance, "seconds": r(out.seconds, 1),
            "patching_seconds": r(hm.patch_seconds, 1), "attribution_seconds": r(hm.attribution_seconds, 1),
            "attribution_speedup": r(hm.patch_seconds / max(hm.attribution_seconds, 1e-9), 1),
            "spearman_patching_vs_attribution": r(hm.rank_correlation, 3),
            "top_percent_overlap": r(hm.agreement(args.percent), 3),
            "selected": [list(h) for h in hm.selected(args.percent)],
            "top5": hm.table(5), "mean_kl_nats": r(sum(hm.kl) / len(hm.kl)),
            "mean_clean_minus_corrupt_logp": r(sum(c - k for c, k in zip(hm.clean_logp, hm.corrupt_logp)) / len(hm.kl)),
        }
        log(f"{head_type}: {json.dumps(result['heads'][head_type]['selected'])} "
            f"rho={result['heads'][head_type]['spearman_patching_vs_attribution']}")

    exp = ExperimentConfig(src=args.src, tgt=args.tgt, n_sentences=args.sentences, percent=args.percent,
                           strength=args.strength, n_random=args.n_random, heads=heads)
    out = run_experiment(handle, "evaluate", exp, data, progress("evaluate"))
    table = out.value.table()
    summary = out.value.ablation_summary()
    rate = {row["condition"]: row["target-language rate"] for row in table}
    steered = next(row for row in table if "steering" in row["condition"])
    instr = rate["instruction"]
    ratio = steered["target-language rate"] / instr if instr else float("nan")
    drop_lang, drop_rand = summary["language"]["rate_drop_mean"], summary["random"]["rate_drop_mean"]
    result["evaluation"] = {"sentences": args.sentences, "provenance": out.provenance, "seconds": r(out.seconds, 1),
                            "table": table, "ablation": {k: {m: r(v) for m, v in s.items()} for k, s in summary.items()}}
    # Two more steering settings on the same sentences: the add mode with more heads and a lower strength,
    # and the patch variant (selected heads replaced by their mean clean outputs).
    steer_types = tuple(dataclasses.replace(heads, head_type=t) for t in HEAD_TYPES.names())
    extra = {}
    for name, mode, percent, strength in (("wide_add_steering", "add", args.wide_percent, args.wide_strength),
                                          ("patch_steering", "patch", args.patch_percent, args.strength)):
        cond = ConditionConfig(src=args.src, tgt=args.tgt, prompt="instruction-free", n_sentences=args.sentences,
                               steer=steer_types, steer_mode=mode, strength=strength, percent=percent)
        extra[name] = run_condition(handle, cond, data, progress(name)).value
        result["evaluation"][name] = {"condition": extra[name].label, "chrF++": round(extra[name].chrf, 2),
                                      "target-language rate": round(extra[name].target_rate, 3),
                                      "sentences": len(extra[name].outputs), "heads": len(extra[name].heads)}
    wide, patch = extra["wide_add_steering"], extra["patch_steering"]
    result["targets"] = {
        "steered_rate_over_instruction_rate": r(ratio, 3), "steering_target_met": bool(ratio >= 0.8),
        "wide_add_steered_rate_over_instruction_rate": r(wide.target_rate / instr, 3) if instr else None,
        "wide_add_steering_target_met": bool(instr and wide.target_rate / instr >= 0.8),
        "patch_steered_rate_over_instruction_rate": r(patch.target_rate / instr, 3) if instr else None,
        "patch_steering_target_met": bool(instr and patch.target_rate / instr >= 0.8),
        "language_ablation_rate_drop": r(drop_lang, 3), "random_ablation_rate_drop": r(drop_rand, 3),
        "ablation_drop_ratio": r(drop_lang / drop_rand, 2) if drop_rand > 0 else None,
        "ablation_target_met": bool(drop_lang >= 2 * max(drop_rand, 0.0) and drop_lang > 0),
    }
    examples = []
    for c in (*out.value.conditions[:4], wide, patch):
        examples.append({"condition": c.label, "outputs": list(c.outputs[:3])})
    result["examples"] = {"sources": list(out.value.conditions[0].sources[:3]), "conditions": examples}

    if args.sweep:  # steering mode x head share x strength on the first 10 held-out sentences
        sweep = []
        grid = [("add", p, st) for p in (1.0, 2.0, 5.0) for st in (1.0, 3.0)] + \
               [("patch", p, 3.0) for p in (1.0, 2.0, 3.0, 5.0)]
        for mode, percent, strength in grid:
            cond = ConditionConfig(src=args.src, tgt=args.tgt, prompt="instruction-free", n_sentences=10,
                                   steer=steer_types, steer_mode=mode, strength=strength, percent=percent)
            c = run_condition(handle, cond, data, progress(f"sweep {mode} {percent:g}% x{strength:g}")).value
            sweep.append({"mode": mode, "percent": percent, "strength": strength if mode == "add" else None,
                          "target_rate": r(c.target_rate, 3), "chrF++": r(c.chrf, 2)})
        result["steering_sweep_10_sentences"] = sweep
    result["wall_seconds"] = r(time.perf_counter() - started, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
