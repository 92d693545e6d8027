"""Drill-down times: Disagreement position and gate, Decoding particle, FP8 head (issue 44 §2)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table


def drilldowns(ctx: Ctx) -> Body:
    r = ctx.load("drilldowns_dis_dec_fp8.json")
    t = r["targets"]
    lines = [f"Each click's backend verb, timed with its parent result already stored (the page shows it before "
             f"anything can be clicked): computed (first click on that selection) and cached (the same click again). "
             f"Store: {r.get('store', 'fresh')}, with the shipped reference artifacts; torch on {r['torch_threads']} threads on a "
             f"{r['cores']}-core machine shared with other jobs (load average {r['load_average_start']} at the start, "
             f"{r['load_average_end']} at the end): the CPU seconds column bounds what two free cores take. "
             f"Targets: cached ≤ {t['cached_s']:g} s, computed ≤ {t['computed_s']:g} s on 2 cores. The first click on "
             "a Disagreement rollout computes both models' top-k at every position of it (one forward per model), so "
             "later clicks on that rollout only read; the gate needs its calibration rollouts once per pair and "
             "setting (minutes; the page asks before computing them). A first click marked \"read: shipped\" is a "
             "first-view object whose drill-down the reference set carries (data/reference/*_drilldowns.jsonl.gz).",
             ""]
    rows = []
    for d in r["drilldowns"]:
        for x in d["rows"]:
            first = sec(x["computed_s"], 2) + (" (read: shipped)" if x.get("first_was_cached") else "")
            rows.append([d["drilldown"], x["selection"], first, sec(x["computed_cpu_s"], 1), sec(x["cached_s"], 3)])
    lines += table(["drill-down", "selection", "computed (wall)", "computed (CPU)", "cached"], rows)
    lines += [f"Parents: " + "; ".join(f"{d['drilldown']}: {d['parent']}" for d in r["drilldowns"]) + ".", "",
              f"All cached within target: **{'yes' if r['all_cached_within_target'] else 'no'}**; all computed "
              f"within target (wall, under the load above): **{'yes' if r['all_computed_within_target'] else 'no'}**.",
              ""]
    return Body(lines, [r["command"]])


SECTIONS = [Section("Drill-downs: Disagreement, Decoding, FP8", ("drilldowns_dis_dec_fp8.json",), drilldowns)]
