"""Estimates that hold: the time the app states before a run against the time it takes, at several loads."""
from __future__ import annotations

import statistics

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
             "store with no memory of the previous level's load, a small request then a larger one, as a page does "
             "(its own thread, the page's background priority). The estimate is what the app states before the run: calibrated with a probe forward for a "
             "verb's first request, from the first request's rate for the second; the ratio is actual / estimate. "
             "The 1-minute load average at the level's start and end, and the share of a core a thread at the page's "
             "priority got at its start (1: idle), are in the table; \"torch threads\" is what the run was expected "
             "to use: one where other work wants the cores (backend/estimates/load.py: 2 threads there took 4-20x "
             "longer, bench/threads_under_load.py). The expected share of a core is the age-weighted mean of the "
             "last minute's measurements, the shares finished runs measured themselves included; the machine's "
             "other work (test suites, a browser bench) comes and goes, so a run can get twice or half the share "
             "it was expected to.", "",
             f"Cases run: {', '.join(r.get('cases', []))}.", "",
             f"Every ratio within {r['within']}x: **{within}** (worst {r['worst_ratio']:.2f}, median "
             f"{r['median_ratio']:.2f}); the bench took "
             f"{sec(r['bench_seconds'], 0)}" + ("." if r.get("complete", True) else
                                                 ", cut short: only the levels in the table finished."),
             ""]
    header = ["busy loops", "load average", "share of a core", "case", "request", "estimate", "actual",
              "actual / estimate", "torch threads", "basis"]
    return Body(lines + table(header, rows), [f"{PY} bench/estimates.py"])


def threads_under_load(ctx: Ctx) -> Body:
    r = ctx.load("threads_under_load.json")
    rows = []
    for level in r["levels"]:
        for run in level["runs"]:
            one, two = statistics.median(run["seconds_1_thread"]), statistics.median(run["seconds_2_threads"])
            rows.append([level["busy_loops"], f"{level['loadavg'][0]:.1f}–{level['loadavg'][1]:.1f}",
                         "–".join(f"{s:.2f}" for s in level["share"]), run["work"], sec(one, 2), sec(two, 2),
                         f"{run['two_over_one']:.1f}"])
    lines = [f"{r['model']}, {r['cores']} cores, each level's busy loops on top of whatever else ran (the machine is "
             "shared). Each piece of work ran in a thread at the page's background priority with 1 and with 2 torch "
             "threads, in turns; the medians. Where other work wants the cores, torch's threads mostly wait for each "
             "other: so a verb computes with one thread there (backend/estimates/load.py `threads_for`), and the "
             "estimates model the threads it uses.", ""]
    header = ["busy loops", "load average", "share of a core", "work", "1 thread", "2 threads", "2 / 1"]
    return Body(lines + table(header, rows), [f"{PY} bench/threads_under_load.py"])


def fit_probes(ctx: Ctx) -> Body:
    r = ctx.load("fit_probes.json")
    rows = [[f["case"], f["declared"], f["fitted"],
             f"{min(x['probes_per_unit'] for x in f['runs']):.2f}–{max(x['probes_per_unit'] for x in f['runs']):.2f}",
             f"{f['large_over_small']:.2f}",
             f"{f['first_run_units']:.2f} ({f['first_run_units_declared']})" if "first_run_units" in f else "–"]
            for f in r["fits"]]
    lines = [f"{r['model']}, load average {r['loadavg'][0]:.1f}–{r['loadavg'][1]:.1f}. What one unit of a verb's "
             "declared work costs in calibration probes (one 16-token forward): each case's small and large request "
             f"timed {r['turns']} times beside a probe, on CPU times with one torch thread (the machine's other work "
             "does not lengthen them). \"declared\" is the constant in backend/<feature>/work.py when the fit ran; "
             "large / small near 1 says the work units scale right. \"first run\" is what a verb's first run in the "
             "process cost beyond a warm small one, in units (declared then in brackets): imports and kernels set up "
             "once.", ""]
    header = ["case", "declared", "fitted (median)", "range", "large / small", "first run (units more)"]
    return Body(lines + table(header, rows), [f"{PY} bench/fit_probes.py"])


SECTIONS = [Section("Estimates against actual times", ("estimates.json",), estimates),
            Section("Calibration: probes per unit of work", ("fit_probes.json",), fit_probes),
            Section("Torch threads on crowded cores", ("threads_under_load.json",), threads_under_load)]
