"""Inspect: every drill-down of a map prepared in one pass right after it, against one forward per click."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, sec, table, times


def inspect_drilldowns(ctx: Ctx) -> Body:
    r = ctx.load("inspect_drilldowns.json")
    lines = [f"On {r['model']} at {r['torch_threads']} torch threads, a fresh store, a computed view (the prompt "
             f"{r['prompt']!r}, not the shipped first view); {r['cores']} cores shared with other jobs (load average "
             f"{r['load_average_start']} at the start, {r['load_average_end']} at the end). Right after a map is "
             "drawn the page computes the drill-down of every object on it in one pass and stores each under the key "
             "its click reads (one forward for every head, one for every state, then a matrix product onto the "
             "vocabulary per 64 objects): a click before that pass computes its own forward, a click after it is a "
             "store read.", ""]
    rows = [[v["view"], v["objects"], sec(v["map_s"], 2), sec(v["click_computed_median_s"], 2), sec(v["pass_s"], 1),
             sec(v["pass_per_object_s"], 3), times(v["one_forward_per_click_over_pass"], 0),
             sec(v["click_after_pass_max_s"], 3)] for v in r["views"]]
    lines += table(["map", "objects", "map computed", "a click alone (median)", "every object in one pass",
                    "per object", "one forward per click / the pass", "a click after the pass (max)"], rows)
    f = r["first_view"]
    lines += [f"The shipped first view (the example prompt; data/reference/inspect_drilldowns.jsonl.gz, written by "
              f"`scripts/first_view_drilldowns.py`): {f['objects']} drill-downs, every one stored on a fresh install: "
              f"**{'yes' if f['all_stored'] else 'no'}**; a click's read took at most {sec(f['click_max_s'], 3)}.", ""]
    return Body(lines, [r["command"], ".venv/bin/python scripts/first_view_drilldowns.py"])


SECTIONS = [Section("Inspect: drill-downs prepared with the map", ("inspect_drilldowns.json",), inspect_drilldowns)]
