"""First-click times of the MT-heads and NAG drill-downs (bench/drilldowns_mt_nag.py)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table


def _idle(r: dict, x: dict) -> str:
    """CPU seconds / threads: the wall time on idle cores."""
    return sec(x["cpu_s"] / r["threads"], 2)


def _reference_row(name: str, part: dict) -> list:
    x = part["reference_first_clicks"]
    return [name, f"{x['objects']}", f"{x['cached']} / {x['objects']}", sec(x["median_s"], 3), sec(x["max_s"], 3)]


def _computed_rows(r: dict, name: str, part: dict, what: str) -> list[list]:
    c = part["computed"]
    before, prep, after = c["click_before_preparation"], c["preparation"], c["clicks_after"]
    during = c.get("click_during_preparation")  # MT: the preparation runs in the background, as on the page
    rows = [[name, f"one {what}, clicked before the preparation", sec(before["seconds"], 2), _idle(r, before)],
            [name, f"preparation: all {prep['objects']} {what}s of the view, one pass"
             + (", in the background (CPU: the click's below included)" if during else ""),
             sec(prep["seconds"], 2), _idle(r, prep)]]
    if during:
        still = "still running when it answered" if during["preparation_still_running"] else "ended before it answered"
        rows.append([name, f"another {what}, clicked during the preparation ({still})", sec(during["seconds"], 2),
                     "–"])
    return [*rows,
            [name, f"{after['objects']} {what}s clicked after it ({after['cached']} served from the store)",
             f"{sec(after['median_s'], 3)} median, {sec(after['max_s'], 3)} max", "–"]]


def drilldowns(ctx: Ctx) -> Body:
    r = ctx.load("drilldowns_mt_nag.json")
    goal = r["targets"]
    mt, nag = r["mt"], r["nag"]
    lines = [f"The verb a click calls, timed as the page calls it (store lookup included; drawing not counted), in a "
             f"fresh store holding the shipped reference artifacts (a fresh install). {r['threads']} torch threads on "
             f"a {r['cpus']}-core machine shared with other jobs (load average {r['load_average_start']} at the "
             f"start, {r['load_average_end']} at the end); \"CPU s / threads\" estimates a computed step on idle "
             f"cores. Target: a first click ≤ {goal['first_click_s']:g} s.", "",
             f"**First views** — every head of the MT heads page's first map ({mt['model']}, {mt['first_map']}) and "
             f"every neuron of the NAG Graph tab's first graph ({nag['model']}, targets '{nag['first_targets']}', "
             f"the first {nag['pool_docs']} pool documents), each clicked once: their drill-downs ship in "
             "`data/reference/mt_head_drilldowns.jsonl.gz` and `nag_neuron_drilldowns.jsonl.gz` "
             "(`scripts/mt_nag_drilldowns.py`), so every first click is a store read.", ""]
    lines += table(["drill-down", "objects clicked", "served from the store", "median first click",
                    "slowest first click"],
                   [_reference_row("MT head", mt), _reference_row("NAG neuron", nag)])
    lines += [f"**Computed views** (not shipped: the {mt['computed']['map']} map; the graph of targets "
              f"'{nag['computed']['targets']}'). Once the view is shown, the page prepares the drill-downs of every "
              "object it shows in one pass, in the background (a line with Stop says so): the MT patching of every "
              "head is one batched run per prompt (the map's own) and the trace captures every layer; the NAG "
              "neurons share one forward per batch of documents. A click after it is a store read. An MT click "
              "before it is stored patches its own head alone (one forward per prompt, "
              "`backend/mt/head_patching.py`), at once, its forwards taking turns with the preparation's; a NAG "
              "click during it waits for it (≤ the preparation's time).", ""]
    lines += table(["drill-down", "step", "wall", "CPU s / threads"],
                   [*_computed_rows(r, "MT head", mt, "head"), *_computed_rows(r, "NAG neuron", nag, "neuron")])
    mc = mt["computed"]
    worst = max(mc["click_before_preparation"]["seconds"], mc.get("click_during_preparation", {}).get("seconds", 0))
    lines += [f"Which target holds on a computed view: ≤ {goal['first_click_s']:g} s once the preparation has ended "
              "(store reads). Before it has, an MT click costs its own head: "
              f"{sec(worst, 2)} at worst here (the fallback target is ≤ {goal['computed_view_s']:g} s on the "
              "embedded models, at idle: see CPU s / threads); the NAG preparation is over within seconds.", ""]
    return Body(lines, [r["command"]])


SECTIONS = [Section("Drill-downs: MT heads and NAG", ("drilldowns_mt_nag.json",), drilldowns)]
