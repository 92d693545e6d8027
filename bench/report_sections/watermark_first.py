"""The Watermark page's first try: how often the default generation is flagged, and how long it takes."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table


def first_try(ctx: Ctx) -> Body:
    r = ctx.load("watermark_first_try.json")
    t, meets = r["targets"], r["meets"]
    rows = []
    for s in r["series"]:
        loads = [run["load_average_1min"] for run in s["runs"]]
        rows.append([s["label"], s["sentences"], f"{s['flagged']}/{s['n']}", sec(s["median_wall_s"], 1),
                     sec(s["max_wall_s"], 1), f"{min(loads):.1f}–{max(loads):.1f}"])
    idle, busy = r["series"][0], r["series"][1]

    def verdict(ok: bool) -> str:
        return "met" if ok else "**not met**"

    lines = [f"{r['model']}, torch threads {r['threads']} of {r['cpu_count']} cores, demo identity: each method's "
             "default generation (its first-try length) from different prompts, then its own detector with default "
             f"settings. Default method `{r['default_method']}`: flagged {idle['flagged']}/{idle['n']} (target ≥ "
             f"{t['flagged_share'] * idle['n']:.0f}/{idle['n']}: {verdict(meets['flagged'])}); median wall "
             f"{sec(idle['median_wall_s'], 1)} (target ≤ {t['idle_median_s']:.0f} s: {verdict(meets['idle_median'])}); "
             f"beside a CPU-bound process at the page's niceness {sec(busy['median_wall_s'], 1)} (target ≤ "
             f"{t['beside_busy_median_s']:.0f} s: {verdict(meets['beside_busy_median'])}). The 1-minute load average "
             "during each series is in the table: 'idle' means no process of the benchmark's own beside it.", ""]
    return Body(lines + table(["series", "sentences", "flagged", "median wall", "max wall", "load"], rows),
                [r["command"]])


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
