"""Every drill-down of every page, clicked in a real browser on a fresh install (bench/drilldown_clicks.py)."""
from __future__ import annotations

import re

from bench.report import Body, Ctx, Section, sec, table


def _object(click: dict) -> str:
    obj = click["object"]
    return obj if isinstance(obj, str) else ", ".join(str(v) for v in obj)


def _cell(click: dict | None) -> str:
    if click is None:
        return "–"
    lost = click.get("lost_clicks", 0)
    retried = f" ({lost} click{'s' if lost > 1 else ''} lost: {'; '.join(click['lost'])})" if lost else ""
    if "failed" in click:
        return f"failed: {click['failed']}" + ("" if click["failed"].startswith("no click registered") else retried)
    return sec(click["drawn_s"], 2) + retried


def _served(click: dict) -> str:
    """"stored", or "computed" with the longest computation the page reported after the click (a small uncached
    step, e.g. reading a pool's documents, says "computed in 0.1 s" on every rerun)."""
    seconds = [float(m) for line in click.get("provenance", ()) for m in re.findall(r"^computed in ([0-9.]+) s", line)]
    if "served" not in click:
        return "–"
    return f"computed ({max(seconds):.1f} s)" if seconds else click["served"]


def _limit(click: dict, view: str, r: dict) -> float:
    """The target a click is held to: a first view's; on a computed view the same when nothing was computed on the
    click (the map's pass stored what the drill-down reads), else the computed views' own."""
    return r["computed_target_s"] if view == "computed" and click.get("served") == "computed" else r["target_s"]


def _rows(target: dict, r: dict) -> list[list]:
    """One row per object: its first click and its click again (same object, after the others)."""
    again = {_object(c): c for c in target["clicks"] if c["click"] == "again"}
    rows = []
    for first in (c for c in target["clicks"] if c["click"] == "first"):
        name = _object(first)
        repeat = again.get(name)
        limit = _limit(first, target["view"], r)
        ok = "failed" not in first and first["drawn_s"] <= limit
        rows.append([name, _cell(first), _cell(repeat), _served(first),
                     f"{sec(first['idle_s'], 2)}" if "idle_s" in first else "–",
                     ("yes" if ok else "**no**") + (f" (≤ {limit:g} s)" if target["view"] == "computed" else "")])
    return rows


def _heading(target: dict) -> str:
    where = target["page"] + (f" › {target['tab']}" if target.get("tab") else "")
    setup = f", after: {target['setup']}" if target.get("setup") else ""
    objects = f", {target['objects']} objects" if "objects" in target else ""
    load = f", load {target['load_average'][0]:g}" if "load_average" in target else ""
    if "chart" not in target:  # a row the overall deadline left unreached names its target by its label
        return f"**{target['label']}**"
    return f"**{where}** · `{target['drilldown']}` from `{target['chart']}` ({target['kind']}{objects}{setup}{load})"


def _part(targets: list[dict], r: dict) -> tuple[list[str], int, int]:
    lines, within, total = [], 0, 0
    for target in targets:
        lines += [_heading(target), ""]
        if target.get("failed"):
            lines += [f"Not measured: {target['failed']}.", ""]
            continue
        rows = _rows(target, r)
        total += len(rows)
        within += sum(row[-1].startswith("yes") for row in rows)
        verdict = "within the target" if target["view"] == "computed" else f"within {r['target_s']:g} s"
        lines += table(["object", "first click", "again", "served", "first click, to script idle", verdict], rows)
    return lines, within, total


def _run(r: dict) -> str:
    """Where and under what load a result was measured (and which rows a later run replaced)."""
    merged = "".join(f" Rows of {', '.join(m['targets'])} are from a later run (`{m['command']}`, load "
                     f"{m['load_average_start']} at its start)." for m in r.get("merged", ()))
    return (f"Headless Chromium {r.get('chromium', '')}, a fresh store (reference artifacts imported by `models "
            f"prepare`, {r['prepare_s']} s), {r['torch_threads']} torch threads on {r['cpus']} cores; load average "
            f"(1, 5, 15 min) {r['load_average_start']} at the start, {r['load_average_end']} at the end "
            "(each drill-down's heading: the 1-min load when its page opened)." + merged)


def drilldown_clicks(ctx: Ctx) -> Body:
    r = ctx.load("drilldown_clicks.json")
    rc = ctx.load("drilldown_clicks_computed.json") or r  # `--view computed` writes its own file
    first = [t for t in r["targets"] if t["view"] == "first"]
    computed = [t for t in rc["targets"] if t["view"] == "computed"]
    first_lines, first_ok, first_n = _part(first, r)
    computed_lines, computed_ok, computed_n = _part(computed, rc)
    cap = r.get("click_cap_s")
    lines = ["The app started as `make run` starts it, on the embedded models. Each drill-down's chart is "
             "clicked as a user clicks (the mouse on the point's pixel until Plotly's hover picks that point) on "
             "its first, middle and last object, then on each again; timed from the click to the drill-down's own "
             "texts on screen with the script idle (\"to script idle\"), and to every chart drawn (\"first click\", "
             "\"again\"). *served*: \"computed (N s)\" when the page said \"computed in\" after the click (N: the "
             "longest), else from the store. "
             "\"again\" (the same object after the others) is a rerun of the page with nothing to compute: the "
             "floor a click costs at this load. "
             "Consecutive clicks are at least Plotly's double-click delay (500 ms) apart: a quicker second click is "
             "a double click, which clears the chart's selection. A click the app did not receive (no rerun, or "
             "its point not selected once the rerun ended) is clicked again and timed from the click that "
             "registered; the lost ones are listed beside the time. "
             + (f"A drill-down not drawn {cap:g} s after its click is a miss. " if cap else "")
             + f"Target (issue 54): a first view's click ≤ {r['target_s']:g} s.", "",
             f"**First views**: {first_ok} of {first_n} first clicks within {r['target_s']:g} s. {_run(r)}", "",
             *first_lines]
    if computed:
        lines += [f"**Computed views** (a map no shipped row serves, computed on this store first; issue 54: ≤ "
                  f"{rc['target_s']:g} s once the map is shown when the map's pass stored what the drill-down reads "
                  f"(served: stored), else ≤ {rc['computed_target_s']:g} s (served: computed); each row says which "
                  f"applies): {computed_ok} of {computed_n} first clicks within their target."
                  + ("" if rc is r else f" {_run(rc)}"), "", *computed_lines]
        left = sorted({t["page"] for t in first} - {t["page"] for t in computed})
        if left:
            lines += [f"No computed map is clicked on {', '.join(left)}: a new map there (another language pair, "
                      "target set, problem or model) takes minutes on these cores.", ""]
    commands = [r["command"]] + ([rc["command"]] if rc is not r else [])
    return Body(lines, [f".venv/bin/python {c.removeprefix('python ')}" for c in commands])


SECTIONS = [Section("Drill-downs: every first click, in the browser", ("drilldown_clicks.json",), drilldown_clicks,
                    also=("drilldown_clicks_computed.json",))]
