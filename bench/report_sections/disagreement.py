"""Disagreement: intervention cost, the intervention sweeps, the reasoning path's floor, where divergence sits."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, clean_command, num, pct, table, times
from bench.report_sections.learnability import SECTIONS as LEARNABILITY

POLICIES = {"guided": "guided (CE gate)", "entropy": "entropy-gated (base entropy only)",
            "random": "random positions, matched to guided", "early": "earliest positions, matched to guided"}


def cost(ctx: Ctx) -> Body:
    r = ctx.load("disagreement.json")
    fp = r["forward_passes"]
    lines = [f"{r['pair']}; {r['prompts']} prompts × {r['tokens_per_run']} tokens, median of {r['rounds']} rounds, "
             f"{r['torch_threads']} torch thread; ratios of {r['ratio_basis']}.", ""]
    lines += table(["against base-only greedy, same output length", "CPU-time ratio", "wall ratio", "target"], [
        ["guided intervention (both models every step)", times(r["guided_vs_base"]),
         times(r["wall_ratios"]["guided_vs_base"]), f"≤ {r['targets']['guided_vs_base']}×"],
        [f"entropy-gated (reasoning model queried at {pct(r['entropy_gate_rate'])} of steps: "
         f"{fp['entropy_gated']['reasoning']} of {fp['entropy_gated']['base']} forwards)",
         times(r["entropy_gated_vs_base"]), times(r["wall_ratios"]["entropy_gated_vs_base"]),
         f"≤ {r['targets']['entropy_gated_vs_base']}×"]])
    return Body(lines, [f"{PY} bench/disagreement.py --tokens {r['tokens_per_run']} --prompts {r['prompts']} "
                        f"--rounds {r['rounds']} --threads {r['torch_threads']}"])


def _sweep_table(r: dict) -> list[str]:
    acc = r["accuracy"]
    budgets = [p["budget"] for p in acc["guided"]]
    rows = []
    for policy, label in POLICIES.items():
        points = {p["budget"]: p for p in acc.get(policy, [])}
        rows.append([label, *[None if b not in points else
                              f"{pct(points[b]['accuracy'], 0)} (realised {pct(points[b]['realised_rate'])})"
                              for b in budgets]])
    lines = table(["policy", *[f"r = {100 * b:g}%" for b in budgets]], rows)
    guided = acc["guided"]
    if "wilson95" in guided[0]:
        lines += table(["guided at", "right / scored", "Wilson 95%", "share of the gap", "vs random (only guided / "
                        "only random, McNemar p)", "realised rate counting stop takeovers"],
                       [[f"r = {100 * p['budget']:g}%", f"{p['right']} / {p['scored']}",
                         f"{pct(p['wilson95'][0], 0)}–{pct(p['wilson95'][1], 0)}", pct(p["gap_share"], 0),
                         None if "vs_random" not in p else f"{p['vs_random']['only_this']} / "
                         f"{p['vs_random']['only_random']}, p = {p['vs_random']['mcnemar_p']:.3g}",
                         pct(p.get("realised_rate_counting_stops"))] for p in guided])
    return lines


def _sweep(ctx: Ctx, name: str, fallback: str = "") -> Body:
    r = ctx.load(name)
    g, prob = r["gate"], r["problems"]
    differs = r.get("reasoning_differs_share")
    floor = "" if differs is None else f"; the reasoning path's floor {pct(differs)}"
    lines = [f"{r['pair']}: the first {prob['heldout']} classic held-out problems, greedy, "
             f"{prob['max_new_tokens']} new "
             f"tokens; gate {g['signal']}, W = {g['window']}{', decisive' if g.get('decisive') else ''}"
             f"{', online cap' if g.get('capped') else ''}, "
             f"calibrated on {prob['calibration_train']} training problems. "
             f"Base alone {pct(r['accuracy']['base'], 0)}, reasoning alone {pct(r['accuracy']['reasoning'], 0)}"
             f"{floor}. Exact match, with the realised intervention rate. Target: ≥ 50% of the gap at a realised "
             "rate ≤ 20%, and ≥ 2× the random control.", ""]
    lines += _sweep_table(r)
    cmd = r.get("command") or fallback
    return Body(lines, [clean_command(cmd, ctx.root)])


def decisive(ctx: Ctx) -> Body:
    return _sweep(ctx, "disagreement_decisive.json")


def decisive_r12(ctx: Ctx) -> Body:
    return _sweep(ctx, "disagreement_decisive_r12.json")


def decisive_everyday(ctx: Ctx) -> Body:
    return _sweep(ctx, "disagreement_decisive_everyday.json")


def plain_and_capped(ctx: Ctx) -> Body:
    body = _sweep(ctx, "disagreement_accuracy.json",
                  f"{PY} bench/disagreement_accuracy.py --threads 2 --sweep-n 50 --rates 10,20")
    t = ctx.load("disagreement_threshold_only.json")
    if not t:
        return body
    lines = [*body.lines, f"With the online budget cap ({t['gate']}):", ""]
    points = t["threshold_only_capped"]["points"]
    budgets = sorted({p["budget"] for p in points})
    lines += table(["policy (capped)", *[f"r = {100 * b:g}%" for b in budgets]],
                   [[POLICIES.get(pol, pol), *[next((f"{pct(p['accuracy'], 0)} (realised {pct(p['rate'])})"
                                                     for p in points if p["policy"] == pol and p["budget"] == b), None)
                                              for b in budgets]]
                    for pol in dict.fromkeys(p["policy"] for p in points)])
    return Body(lines, [*body.commands, t["threshold_only_capped"]["command"].replace("python -m", f"{PY} -m")])


def concentration(ctx: Ctx) -> Body:
    r = ctx.load("disagreement_accuracy.json")
    rows = []
    for signal, parts in r["concentration"].items():
        for source, c in parts.items():
            f = c["failure_auroc"]
            rows.append([signal, f"{source} ({c['rollouts']} rollouts, {c['tokens']} tokens)", num(c["gini"]),
                         pct(c["share_in_top10pct"], 0), pct(c["tokens_carrying_50pct"], 0),
                         num(c["top1pct_mean_relative_position"]), pct(c["top1pct_high_entropy_share"], 0),
                         num(c["spearman_divergence_vs_base_entropy"]),
                         f"{c['category_enrichment_top1pct'].get('planning', 0):.2f}×",
                         f"{num(f['topk_divergence'])} / {num(f['mean_entropy'])} ({f['wrong']} wrong)"])
    lines = table(["signal", "along", "Gini", "top 10% carry", "tokens carrying half", "top 1% mean t/T",
                   "top 1% high-entropy", "Spearman vs base entropy", "planning-word enrichment (top 1%)",
                   f"failure AUROC: top-k divergence / mean base entropy"], rows)
    e = r["eopd"]
    lines += ["Entropy-aware on-policy distillation view:", ""]
    lines += table(["rollouts (T = 1)", "tokens", "teacher-entropy gate τ", "share gated", "mean reverse KL",
                    f"top-{e['top_k']} forward KL (gated)", "EOPD term", "plain reverse-KL term"],
                   [[e["rollouts"], e["tokens"], e["tau"], pct(e["gated_share"], 0), num(e["mean_reverse_kl"]),
                     num(e["mean_forward_kl_topk_gated"]), num(e["loss_eopd"]), num(e["loss_plain_reverse_kl"])]])
    return Body(lines, [f"{PY} bench/disagreement_accuracy.py --threads 2 --sweep-n 50 --rates 10,20"])


def floor(ctx: Ctx) -> Body:
    rows, cmds = [], []
    for path in ctx.glob("intervention_floor_*.json"):
        r = ctx.load(path.name)
        name = path.stem.removeprefix("intervention_floor_")
        rows.append([f"`{name}`", r["problems"], r["max_new_tokens"], pct(r["reasoning"]["accuracy"], 0),
                     f"**{pct(r['floor_rate'])}**", f"{r['gap_points']:g} pts"])
        cmds.append(clean_command(r["command"], ctx.root))
    lines = ["Along the reasoning model's own greedy outputs, the share of steps where the base's greedy token "
             "differs: the lowest realised rate at which a decisive gate can reproduce the reasoning model.", ""]
    return Body(lines + table(["reasoning model", "problems", "new tokens", "reasoning right", "floor", "gap"], rows),
                cmds)


SECTIONS = [
    Section("Disagreement: intervention cost", ("disagreement.json",), cost),
    Section("Disagreement: decisive sweep, first reasoner adapter (the page's pair)",
            ("disagreement_decisive.json",), decisive),
    Section("Disagreement: decisive sweep at r = 12.5%", ("disagreement_decisive_r12.json",),
            decisive_r12),
    Section("Disagreement: decisive sweep, everyday adapter", ("disagreement_decisive_everyday.json",),
            decisive_everyday),
    Section("Disagreement: threshold-only sweep without the decisive condition",
            ("disagreement_accuracy.json",), plain_and_capped, also=("disagreement_threshold_only.json",)),
    Section("Disagreement: where the divergence sits", ("disagreement_accuracy.json",), concentration),
    Section("Disagreement: the reasoning path's floor", ("intervention_floor_*.json",), floor),
    *LEARNABILITY,
]
