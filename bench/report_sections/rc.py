"""RC (reasoning-summary cycles) against plain decoding at the same total budget (bench/rc_cycles.py)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, clean_command, pct, table


def _interval(part: dict) -> str:
    lo, hi = part["wilson95"]
    return f"{pct(part['accuracy'], 0)} ({part['right']}/{part['n']}; {pct(lo, 0)}–{pct(hi, 0)})"


def _one(r: dict) -> list[str]:
    p, rc = r["problems"], r["rc"]
    adapter = "arith" in r["model_id"]  # the project's arithmetic adapters; another model never saw these problems
    where = ("held-out chains of 4–6 operations (`backend.tasks.long_chains`)"
             + (", past the adapter's one- to three-step training problems" if adapter else "")
             if p.get("set", "long") == "long" else
             "three-step held-out problems of the everyday family (the adapter's longest training length), with a "
             "per-cycle budget below their solutions' length")
    solution = [row["solution_tokens"] for row in r["rows"]]
    lines = [f"`{r['model_id']}` (fingerprint `{r['fingerprint']}`), greedy; {p['n']} {where}"
             + ("" if p.get("finished", True) else f" (stopped at {p['n']} of the {p['n_requested']} asked for)")
             + f". Reference solutions: {min(solution)}–{max(solution)} tokens (mean "
             f"{sum(solution) / len(solution):.0f}). RC: {rc['cycles']} cycles of up to {rc['budget']} reasoning "
             f"tokens, a summary of up to {rc['summary_tokens']} tokens after each but the last "
             f"({rc['total_tokens']} tokens in all). Plain: one greedy decode allowed the same total; at a smaller "
             "budget, that decode cut there (greedy is deterministic). Accuracy with Wilson 95% intervals:", ""]
    rows = [[b["cycle"], b["budget_tokens"], b["rc_mean_tokens"], _interval(b["rc"]), _interval(b["plain"])]
            for b in r["by_cycle"]]
    lines += table(["after cycle", "budget (tokens)", "RC tokens spent (mean)", "RC accuracy",
                    "plain at the same budget"], rows)
    tests = [[t["a"], t["b"], t["only_a_right"], t["only_b_right"], f"{t['mcnemar_p']:.3g}"] for t in r["tests"]]
    lines += ["Paired on the same problems (exact McNemar):", ""]
    lines += table(["", "against", "only the first right", "only the second right", "p"], tests)
    summaries = [text for row in r["rows"] for text in row["rc_summaries"] if text]
    solving = sum("Answer:" in text for text in summaries)  # a "summary" that works the problem again
    lines += [f"The answer changed after cycle 1 on {r['answer_changed_after_cycle_1']} of {p['n']} problems; plain "
              f"decoding stopped by itself after {r['plain_mean_tokens']} tokens on average. {solving} of the "
              f"{len(summaries)} summaries hold an answer line of their own"
              + (": the model works the problem again instead of summarising its trace, and the next cycle starts "
                 "from that attempt." if solving > len(summaries) / 2 else "."), ""]
    return lines


def rc_cycles(ctx: Ctx) -> Body:
    lines, cmds = [], []
    for path in ctx.glob("rc_cycles*.json"):
        r = ctx.load(path.name)
        lines += _one(r)
        cmds.append(clean_command(r["command"], ctx.root))
    return Body(lines, cmds)


SECTIONS = [Section("RC: reasoning-summary cycles vs plain decoding at the same budget", ("rc_cycles*.json",),
                    rc_cycles)]
