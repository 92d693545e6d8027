"""Drill-down times of the MT-heads and NAG pages (bench/drilldowns_mt_nag.py)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table


def _idle(r: dict, x: dict) -> str | None:
    """CPU seconds / threads: the computed open's wall time on idle cores (absent in older results)."""
    return sec(x["computed_cpu_s"] / r["threads"], 2) if "computed_cpu_s" in x else None


def drilldowns(ctx: Ctx) -> Body:
    r = ctx.load("drilldowns_mt_nag.json")
    goal = r["targets"]
    mt, nag = r["mt"], r["nag"]
    lines = [f"The verb a click calls, timed as the page calls it (store lookup included): computed (never opened "
             f"before in that store), then cached. {r['threads']} torch threads on a {r['cpus']}-core machine shared "
             f"with other jobs (load average {r['load_average_start']} at the start, {r['load_average_end']} at the "
             "end), so the wall times of computed opens are inflated; the column \"CPU s / threads\" (the process's "
             "CPU seconds over its threads) roughly estimates what they would take on idle cores. "
             f"Targets: cached ≤ {goal['cached_s']:g} s, computed ≤ {goal['computed_s']:g} s.", "",
             f"**MT heads** ({mt['model']}, {mt['map']}): attention row at the answer position, vocabulary projection, "
             "patching on every prompt of the map.", ""]
    lines += table(["head", "computed (wall)", "CPU s / threads", "cached", "prompt tokens", "mean patching (nats)",
                    "promoted tokens in target-language sentences"],
                   [[f"L{x['layer']}.H{x['head']}", sec(x["computed_s"], 2), _idle(r, x), sec(x["cached_s"], 2),
                     x["prompt_tokens"],
                     f"{x['mean_patching']:+.4f}", f"{x['target_share']:.0%}"] for x in mt["rows"]])
    lines += [f"**NAG neuron** ({nag['model']}, the first {nag['pool_docs']} sample-pool documents, targets "
              f"'{nag['targets']}' with their features cached as the page's ranking leaves them): top contexts, "
              "histogram, logit effects, where it fires.", ""]
    lines += table(["neuron", "computed (wall)", "CPU s / threads", "cached", "tokens scanned", "strongest token"],
                   [[f"L{x['layer']}.N{x['neuron']}", sec(x["computed_s"], 2), _idle(r, x), sec(x["cached_s"], 2),
                     x["scanned_tokens"], repr(x["top_context"])] for x in nag["rows"]])
    return Body(lines, [r["command"]])


SECTIONS = [Section("Drill-downs: MT heads and NAG", ("drilldowns_mt_nag.json",), drilldowns)]
