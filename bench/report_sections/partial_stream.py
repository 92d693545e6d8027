"""Long work streams what it has (issue 54 §2): how often the sweep, an MT experiment and the NAG ranking show
something new while they run (bench/partial_stream.py)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, clean_command, sec, table, times


def _seconds(values: list[float]) -> str:
    return ", ".join(sec(v) for v in values)


def partial_stream(ctx: Ctx) -> Body:
    r = ctx.load("partial_stream.json")
    rows = [[name, w["what"], w["partials"], sec(w["first_partial_s"]), sec(w["longest_without_news_s"]),
             _seconds(w["watched_seconds"]), _seconds(w["unwatched_seconds"]), w["order"],
             times(w["watched_over_unwatched"], 3), f"{w['load_1min'][0]:g} → {w['load_1min'][1]:g}"]
            for name, w in r["workloads"].items()]
    lines = ["Each long computation hands its partial result (the sweep over the problems done, the experiment's "
             "conditions with the running one's sentences so far, the documents ranked so far) to the page, which "
             "draws it under the status box as it comes and keeps it, marked partial, after a Stop. Each workload "
             "ran as its page runs it, on a fresh store each time, watched (W) and with nobody watching (U), side "
             f"by side in one process on {r['cpu_count']} shared cores. *Partials*, *first partial* and *longest "
             "without news* (the longest stretch with nothing new on screen: from the start to the first partial, "
             "between two, or from the last to the end) are the first watched run's. *W / U*: the watched runs' "
             "total time over the unwatched runs': what building the partial results costs, within the noise of a "
             "shared machine (ABBA order, where run twice, puts the first run's one-time costs on both sides).", "",
             *table(["work", "settings", "partials", "first partial", "longest without news", "watched", "unwatched",
                     "order", "W / U", "load (1 min) start → end"], rows)]
    commands = dict.fromkeys(clean_command(w["command"], ctx.root) for w in r["workloads"].values())
    return Body(lines, list(commands))


SECTIONS = [Section("Long work streams its partial results", ("partial_stream.json",), partial_stream)]
