"""Decoding: the speed comparisons and accuracy per strategy and budget."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, clean_command, num, pct, sec, table, times


def speed(ctx: Ctx) -> Body:
    r = ctx.load("decoding.json")
    rs, mh = r["resampling"], r["asmc_vs_mh"]
    t = r.get("targets", {})
    lines = [f"{r['model']}, {r['device']}, {r['threads']} torch thread(s), torch {r['torch']}.", ""]
    lines += table(["comparison", "measured", "target"], [
        [f"cache-coherent resampling (reorder KV rows) vs recomputing prefixes (N = {rs['n']}, {rs['tokens']} tokens, "
         f"{rs['resampling_events']} resamplings; wall / CPU)",
         f"{times(rs['speedup_reorder_vs_recompute']['wall_s'], 1)} / "
         f"{times(rs['speedup_reorder_vs_recompute']['cpu_s'], 1)} faster", t.get("speedup_reorder_vs_recompute")],
        [f"ASMC overhead vs plain batched sampling ({rs['n']} × {rs['tokens']} tokens; wall / CPU)",
         f"{times(rs['asmc_overhead_vs_plain']['wall_s'])} / {times(rs['asmc_overhead_vs_plain']['cpu_s'])}",
         t.get("asmc_overhead_vs_plain")],
        [f"ASMC (N = {mh['asmc']['n']}) vs MH (block {mh['mh']['block_size']}, {mh['mh']['mh_steps']} steps) at equal "
         f"token budget ×{mh['budget_x']}, {mh['problems']} problems: p95 latency",
         f"{sec(mh['asmc']['p95_latency_s'])} vs {sec(mh['mh']['p95_latency_s'])} "
         f"({times(mh['p95_ratio_mh_over_asmc'], 1)} lower)", t.get("p95_ratio_mh_over_asmc")],
    ])
    cmd = (f"{PY} bench/decoding.py --threads {r['threads']} --n {rs['n']} --tokens {rs['tokens']}"
           f" --alpha {r['alpha']:g}"
           f" --problems {mh['problems']} --mh-tokens {mh['tokens']} --budget {mh['budget_x']}"
           f" --block {mh['mh']['block_size']} --fresh")
    return Body(lines, [cmd])


def _accuracy(ctx: Ctx, name: str) -> Body:
    r = ctx.load(name)
    lines = [f"`{r['model_id']}` ({r['model']}, fingerprint `{r['fingerprint']}`): {r['sets']['heldout']} problems of "
             f"the generator's {r['heldout_family']} held-out split and {r['sets']['handwritten']} hand-written ones, "
             f"{r['max_new_tokens']} new tokens, alpha {r['alpha']:g}. Budget = generated tokens / max new tokens.", ""]
    rows = []
    for s in r["summary"]:
        auroc = s.get("auroc_low_ess_predicts_wrong")
        ess = (f"{num(s['mean_ess_min_over_n_correct'])} / {num(s['mean_ess_min_over_n_wrong'])}"
               if "mean_ess_min_over_n_correct" in s else None)
        rows.append([s["label"], s["budget"], pct(s["accuracy"]), pct(s.get("accuracy_heldout")),
                     pct(s.get("accuracy_handwritten")), f"{s['mean_tokens']:.0f}", sec(s["mean_latency_s"]),
                     sec(s["p95_latency_s"]), num(auroc), ess])
    lines += table(["strategy", "budget", "accuracy", "held-out", "hand-written", "tokens per problem", "mean latency",
                    "p95 latency", "AUROC of low ESS_min/N for a wrong answer", "mean ESS_min/N right / wrong"], rows)
    lines += ["Each p^alpha setting against the baselines on the same problems (exact McNemar test on the problems "
              "only one of the two solves):", ""]
    lines += table(["setting", "against", "difference", "only it right / only the other", "McNemar p"],
                   [[c["label"], c["against"], f"{100 * c['accuracy_difference']:+.1f} pts",
                     f"{c['only_label_right']} / {c['only_against_right']}", f"{c['mcnemar_p']:.3g}"]
                    for c in r["comparisons"]])
    cmds = r.get("commands") or [r["command"]]
    return Body(lines, [clean_command(c, ctx.root) for c in cmds])


def accuracy_first_reasoner(ctx: Ctx) -> Body:
    return _accuracy(ctx, "decoding_accuracy.json")


def accuracy_everyday(ctx: Ctx) -> Body:
    body = _accuracy(ctx, "decoding_accuracy_everyday.json")
    note = ["The 2,400 decodes are carried in `bench/runs/decoding_accuracy_everyday.jsonl.gz`: import them with "
            "`python -m backend store reference-import --directory bench/runs` and the command only reads them.", ""]
    return Body(body.lines + note, body.commands)


SECTIONS = [
    Section("Decoding speed", ("decoding.json",), speed),
    Section("Decoding accuracy, everyday adapter (the Decoding page's model)",
            ("decoding_accuracy_everyday.json",), accuracy_everyday),
    Section("Decoding accuracy, first reasoner adapter", ("decoding_accuracy.json",), accuracy_first_reasoner),
]


def kernel(ctx: Ctx) -> Body:
    lines, cmds = [], []
    for path in ctx.glob("kernel*.json"):
        r = ctx.load(path.name)
        m = r.get("machine", {})
        lines += [f"**`{path.name}`**: `{r.get('model')}`, {r.get('tokens')} new tokens, median of "
                  f"{r.get('reps')} interleaved repetitions, {r.get('threads')} torch thread(s); "
                  f"{m.get('device', '?')} ({m.get('gpu') or m.get('cpu') or '?'}). Ratio = the feature's decoding "
                  "through the kernel / a bare transformers forward loop (DynamicCache) over the same tokens and "
                  "batch.", ""]
        rows = []
        for name, f in r.get("features", {}).items():
            s, ratio, shape = f.get("seconds", {}), f.get("ratio", {}), f.get("rows_x_tokens")
            same = f.get("ratio_same_math", {}).get("cpu_s")
            rows.append([name, " × ".join(map(str, shape)) if isinstance(shape, list) else shape,
                         sec(s.get("kernel", {}).get("wall_s"), 2), sec(s.get("bare", {}).get("wall_s"), 2),
                         times(ratio.get("wall_s")), times(ratio.get("cpu_s")), times(same) if same else "–"])
        lines += table(["feature", "rows × tokens", "kernel (wall)", "bare loop (wall)", "ratio (wall)",
                        "ratio (CPU)", "ratio (CPU) vs a bare loop with the same log p / log q math"], rows)
        lines += ["", "Target: ≤ 1.05×. CPU-time ratios are the steady figure on a shared machine (the wall ratios "
                  "moved between 0.7× and 1.4× with the load of other jobs). The bare loop picks as the feature does "
                  "(argmax, or a softmax draw); the importance-weighted samplers also compute log p and log q of "
                  "every draw, which the last column gives the bare loop too.", ""]
        if r.get("command"):
            cmds.append(clean_command(r["command"], ctx.root))
    return Body(lines, cmds)


SECTIONS.insert(1, Section("Generation kernel vs a bare transformers loop", ("kernel*.json",), kernel))

from bench.report_sections.rc import SECTIONS as _RC  # noqa: E402  (RC is a decoding strategy)

SECTIONS += _RC
