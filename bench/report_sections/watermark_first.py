"""The Watermark page's first try: the default generation's time against the issue's 60 s target."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table


def first_try(ctx: Ctx) -> Body:
    r = ctx.load("watermark_first_try.json")
    rows = []
    for run in r["runs"]:
        marked, plain = run["parts"]
        rows.append([run["seed"], f"{run['load_average_1min']:.1f}",
                     *(f"{sec(part['wall_s'], 0)} / {sec(part['cpu_s'])}" for part in (marked, plain, run))])
    met = "met" if r["wall_meets_target"] else "not met on this machine"
    lines = [f"{r['model']}: the page's default, IPMark with B = {r['candidates']} candidates and {r['sentences']} "
             f"sentences for the demo identity, then the unwatermarked text beside it; torch threads {r['threads']} of "
             f"{r['cpu_count']} cores. Median wall {sec(r['median_wall_s'], 0)}, CPU {sec(r['median_cpu_s'])}; target "
             f"≤ {r['target_s']:.0f} s wall: {met}. The machine was shared (1-minute load average in the table): "
             "the CPU time is the work itself, which an otherwise idle machine does in about that wall time. The "
             f"estimate the page showed before starting: {sec(r['estimate_s'], 0)} ("
             + "; ".join(f"{m}: {b}" for m, b in r["estimate_basis"].items()) + ").", ""]
    return Body(lines + table(["seed", "load", "IPMark wall / CPU", "unwatermarked wall / CPU", "total wall / CPU"],
                              rows), [r["command"]])


def example_verdicts(ctx: Ctx) -> Body:
    r = ctx.load("watermark_example_verdicts.json")
    rows = [[x["example"], x["characters"], f"{x['load_average_1min']:.1f}", f"{sec(x['wall_s'])} / {sec(x['cpu_s'])}",
             f"{sec(x['again_wall_s'])} / {sec(x['again_cpu_s'])}", ", ".join(x["flagged_by"]) or "none"]
            for x in r["examples"]]
    lines = [f"{r['model']}: each shipped example text (one click on the page) judged by every registered method, "
             f"in a fresh store with the demo identity; the model loaded first ({sec(r['model_load_wall_s'])} wall). "
             "The first example also pays the sentence embedder's load. Shared machine: the load average is in the "
             "table.", ""]
    return Body(lines + table(["example", "characters", "load", "verdicts wall / CPU", "again wall / CPU",
                               "flagged by"], rows), [r["command"]])


SECTIONS = [Section("Watermark: the first try", ("watermark_first_try.json",), first_try),
            Section("Watermark: verdicts on the example texts", ("watermark_example_verdicts.json",),
                    example_verdicts)]
