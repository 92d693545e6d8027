"""Estimates that hold: the time the app states before a run against the time it takes, at several loads."""
from __future__ import annotations

from bench.report import PY, Body, Ctx, Section, sec, table


def estimates(ctx: Ctx) -> Body:
    r = ctx.load("estimates.json")
    rows = []
    for level in r["levels"]:
        for run in level["runs"]:
            rows.append([level["busy_loops"], f"{level['start']['loadavg']:.1f}–{level['end']['loadavg']:.1f}",
                         f"{level['start']['share']:.2f}",
                         run["case"], run["size"], sec(run["estimate_s"], 1), sec(run["actual_s"], 1),
                         f"{run['ratio']:.2f}",
                         run.get("threads_assumed", "–"),
                         "calibrated" if run["basis"].startswith("calibrated") else "earlier run"])
    within = "yes" if r["every_ratio_within"] else "no"
    lines = [f"{r['model']}, {r['cores']} cores. Each load level adds that "
             "many busy-loop processes (each in a session of its own, as independent jobs are) to whatever else ran, "
             "then runs every case on a fresh "
             "store, a small request then a larger one, as a page does (its own thread, the page's background "
             "priority). The estimate is what the app states before the run: calibrated with a probe forward for a "
             "verb's first request, from the first request's rate for the second; the ratio is actual / estimate. "
             "The 1-minute load average at the level's start and end, and the share of a core a thread at the page's "
             "priority got at its start (1: idle), are in the table; \"torch threads\" is what the run was expected "
             "to use: one where other work wants the cores (backend/estimates/load.py: 2 threads there took 5-20x "
             "longer, bench/threads_under_load.py).", "",
             f"Cases run: {', '.join(r.get('cases', []))}.", "",
             f"Every ratio within {r['within']}x: **{within}** (worst {r['worst_ratio']:.2f}, median "
             f"{r['median_ratio']:.2f}); the bench took "
             f"{sec(r['bench_seconds'], 0)}" + ("." if r.get("complete", True) else
                                                 ", cut short: only the levels in the table finished."),
             ""]
    header = ["busy loops", "load average", "share of a core", "case", "request", "estimate", "actual",
              "actual / estimate", "torch threads", "basis"]
    return Body(lines + table(header, rows), [f"{PY} bench/estimates.py"])


SECTIONS = [Section("Estimates against actual times", ("estimates.json",), estimates)]
