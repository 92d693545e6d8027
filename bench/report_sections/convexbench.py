"""ConvexBench: macro F1 against composition depth, direct vs decomposed, and the decomposed strategy's per-rule
node accuracy (bench/convexbench.py)."""
from __future__ import annotations

from bench.report import Body, Ctx, Section, clean_command, num, pct, table


def _interval(lo: float | None, hi: float | None) -> str:
    return f"[{num(lo)}, {num(hi)}]"


def convexbench(ctx: Ctx) -> Body:
    r = ctx.load("convexbench.json")
    lines = [f"Is f(x, y) = chain_x(x) + chain_y(y) convex, concave or neither? Each chain composes `depth` operators "
             f"(exp, scaling, shifts, added convex/concave terms, squares of affine arguments); labels by the "
             f"composition rules, checked by sympy's Hessian at small depths. Labels cycle convex/concave/neither "
             f"(seed {r['seed']}). F1: macro over the three classes, 95% bootstrap interval over problems. "
             f"Answers read from the candidates' log-probabilities (no sampling). Answering one class always scores "
             f"macro F1 0.17 on balanced labels, guessing uniformly about 0.33."
             + ("" if r.get("finished") else " **Partial run** (stopped before every round finished)."), ""]
    for model_id, m in r["models"].items():
        f1 = {(row["strategy"], row["depth"]): row for row in m["f1"]}
        lines += [f"**{m['model']}** (`{model_id}`), {m['rounds']} problem(s) per depth:", ""]
        rows = []
        for depth in r["depths"]:
            cells = [depth]
            for strategy in r["strategies"]:
                row = f1.get((strategy, depth))
                cells += [None, None] if row is None else [
                    f"{num(row['f1'])} {_interval(row['f1_lo'], row['f1_hi'])} (n = {row['n']})",
                    ", ".join(f"{k} {v}" for k, v in row["answered"].items())]
            rows.append(cells)
        header = ["depth"] + [h for s in r["strategies"] for h in (f"{s}: F1 [95% CI]", f"{s}: answers")]
        lines += table(header, rows)
        if m.get("direct_centred"):
            cells = ", ".join(f"depth {x['depth']}: {num(x['f1'])} {_interval(x['f1_lo'], x['f1_hi'])}"
                              for x in m["direct_centred"])
            lines += [f"Diagnostic: direct with each answer's log-probability centred on its mean over the depth's "
                      f"problems (is there signal beyond a prior for one word?): {cells}.", ""]
        if m.get("rules"):
            lines += ["Decomposed strategy, per-node answers by rule (every node of every expression, Wilson 95%; a "
                      "node question holds only its operator, so equal operators get the same answer):", ""]
            lines += table(["rule", "truth", "nodes", "accuracy [95% CI]", "most common wrong answer"],
                           [[x["rule"], x["truth"], x["n"], f"{pct(x['accuracy'])} "
                             f"[{pct(x['accuracy_lo'])}, {pct(x['accuracy_hi'])}]", x["answered_instead"] or None]
                            for x in m["rules"]])
    wall = r.get("wall_seconds")
    if wall is not None:
        lines += [f"Wall time of the run that wrote this {wall / 60:.0f} min on CPU ({r.get('threads')} torch threads, "
                  f"load average {r.get('load_average')} at the last write; answers already in the store are served "
                  f"from it, so a resumed run is shorter than a fresh one).", ""]
    return Body(lines, [clean_command(r["command"])])


SECTIONS = [Section("ConvexBench: convexity under deep composition", ("convexbench.json",), convexbench)]
