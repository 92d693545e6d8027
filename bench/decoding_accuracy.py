"""Accuracy per decoding strategy and budget on arithmetic problems, with ESS collapse as a failure signal.

Problems: the generator's held-out split (`--heldout N`, family `--family`) plus the hand-written set
(data/arith/handwritten.jsonl, `--handwritten N` of them). Strategies: greedy, temperature-1 sampling,
low temperature (one sequence each), and best-of-n, MH power sampling and ASMC at each budget of
`--budgets` (generated tokens / max_new_tokens: n samples or particles, MH steps set to match).

Every (setting, problem) run goes through the store, so an interrupted run resumes where it stopped and
a larger budget list reuses the runs already made. A run longer than one machine's life is carried over in
git: export the decodes made so far (`python -m backend store reference-export --store S --fingerprint F
--only decoding:run -o bench/runs/NAME.jsonl.gz`, F being the model's fingerprint), and on the next machine
import them into the bench's store (`DASH_STORE=S python -m backend store reference-import --directory
bench/runs`) before running the same command again.

Usage: .venv/bin/python bench/decoding_accuracy.py [--model smollm2-135m-arith-reasoner] [--heldout 40]
           [--budgets 2,4,8] [--tokens 96]
Writes bench/results/decoding_accuracy.json (per setting: accuracy on each set, latency mean/p95, tokens;
for ASMC the AUROC of ESS_min/N for predicting a wrong answer; every MH and ASMC setting paired against
temperature-1 sampling and greedy on the same problems, with McNemar's exact p) and prints the README's tables.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.significance import discordant, mcnemar_exact  # noqa: E402


def auroc(scores: list[float], positive: list[bool]) -> float | None:
    """P(score of a positive > score of a negative), ties counted half; None without both classes."""
    pos = np.array([s for s, p in zip(scores, positive) if p])
    neg = np.array([s for s, p in zip(scores, positive) if not p])
    if not len(pos) or not len(neg):
        return None
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def paired(rows, label: str, against: str) -> dict:
    """`label` against `against` on the same problems: accuracy difference, the discordant counts and McNemar's
    exact p (the honest test for two strategies scored on one problem set)."""
    ours = {r.problem_id: bool(r.correct) for r in rows if r.label == label}
    theirs = {r.problem_id: bool(r.correct) for r in rows if r.label == against}
    shared = ours.keys() & theirs.keys()
    wins, losses = discordant(ours, theirs)
    return {"label": label, "against": against, "problems": len(shared),
            "accuracy_difference": round((wins - losses) / len(shared), 4) if shared else None,
            "only_label_right": wins, "only_against_right": losses, "mcnemar_p": round(mcnemar_exact(wins, losses), 4)}


def comparisons(rows, summary: list[dict]) -> list[dict]:
    """Every p^alpha setting (MH, ASMC) against temperature-1 sampling and against greedy, where the run has them
    (a shard of one strategy has neither: its result is merged into one that has)."""
    present = {row["label"] for row in summary}
    power = [row["label"] for row in summary if row["strategy"] in ("mh", "asmc")]
    return [paired(rows, label, against) for label in power for against in ("Sampling", "Greedy")
            if against in present]


def markdown(result: dict) -> str:
    """The README's table: one row per strategy, budgets side by side."""
    by_strategy: dict[str, list[dict]] = {}
    for row in result["summary"]:
        by_strategy.setdefault(row["strategy"], []).append(row)
    sets = list(result["sets"])

    def cells(rows: list[dict], key: str, fmt: str) -> str:
        return " / ".join(format(row[key], fmt) if row.get(key) is not None else "–" for row in rows)

    lines = [f"| strategy | budget | accuracy | {' ; '.join(sets)} | tokens per problem | mean latency | "
             "p95 latency | AUROC of low ESS_min/N for a wrong answer |", "|---|---|---|---|---|---|---|---|"]
    for rows in by_strategy.values():
        per_set = " ; ".join(cells(rows, f"accuracy_{name}", ".1%") for name in sets)
        lines.append(f"| {rows[0]['label'].split(' x')[0]} | {cells(rows, 'budget', 'd')} | "
                     f"{cells(rows, 'accuracy', '.1%')} | {per_set} | {cells(rows, 'mean_tokens', '.0f')} | "
                     f"{cells(rows, 'mean_latency_s', '.1f')} s | {cells(rows, 'p95_latency_s', '.1f')} s | "
                     f"{cells(rows, 'auroc_low_ess_predicts_wrong', '.2f')} |")
    lines += ["", "| p^alpha setting | against | difference | only it right / only the other right | McNemar p |",
              "|---|---|---|---|---|"]
    lines += [f"| {c['label']} | {c['against']} | {c['accuracy_difference']:+.1%} | {c['only_label_right']} / "
              f"{c['only_against_right']} | {c['mcnemar_p']:.3f} |" for c in result["comparisons"]]
    return "\n".join(lines)


def summarise(rows, set_of: dict[str, str]) -> list[dict]:
    """Per setting: accuracy overall and per set, latency, tokens; ESS_min/N AUROC where there are particles."""
    out = []
    for label in dict.fromkeys(r.label for r in rows):
        mine = [r for r in rows if r.label == label]
        latency = np.array([r.wall_seconds for r in mine])
        row = {"label": label, "strategy": mine[0].strategy, "budget": mine[0].budget, "problems": len(mine),
               "accuracy": float(np.mean([bool(r.correct) for r in mine])),
               "mean_latency_s": round(float(latency.mean()), 2),
               "p95_latency_s": round(float(np.percentile(latency, 95)), 2),
               "mean_tokens": round(float(np.mean([r.tokens_generated for r in mine])), 1)}
        for name in dict.fromkeys(set_of.values()):
            part = [bool(r.correct) for r in mine if set_of[r.problem_id] == name]
            row[f"accuracy_{name}"] = round(float(np.mean(part)), 4) if part else None
        if mine[0].ess_min_ratio is not None:
            # a low ESS_min/N should flag a wrong answer: AUROC of (1 - ESS_min/N) for "wrong"
            row["auroc_low_ess_predicts_wrong"] = auroc([1 - r.ess_min_ratio for r in mine],
                                                        [not r.correct for r in mine])
            for verdict in (True, False):
                vals = [r.ess_min_ratio for r in mine if bool(r.correct) is verdict]
                row[f"mean_ess_min_over_n_{'correct' if verdict else 'wrong'}"] = (
                    round(float(np.mean(vals)), 4) if vals else None)
        if mine[0].acceptance_rate is not None:
            row["mh_acceptance_rate"] = round(float(np.mean([r.acceptance_rate for r in mine])), 3)
        out.append(row)
    return out


STRATEGIES = ("greedy", "sampling", "low_temp", "best_of_n", "mh", "asmc")


def merged(earlier: dict, added: dict) -> dict:
    """`added`'s settings over `earlier`'s (same model, problems and token limit): rows and comparisons of a
    re-run label are replaced, the rest kept; the summary is ordered by strategy, then budget."""
    for key in ("model_id", "fingerprint", "sets", "heldout_family", "max_new_tokens", "alpha"):
        if earlier[key] != added[key]:
            raise SystemExit(f"--merge: {key} differs ({earlier[key]!r} vs {added[key]!r})")
    labels = {row["label"] for row in added["summary"]}
    rank = {s: i for i, s in enumerate(STRATEGIES)}
    summary = sorted([r for r in earlier["summary"] if r["label"] not in labels] + added["summary"],
                     key=lambda r: (rank[r["strategy"]], r["budget"]))
    kept = [c for c in earlier["comparisons"] if c["label"] not in labels]
    order = {row["label"]: i for i, row in enumerate(summary)}
    return {**earlier, "settings": {**earlier["settings"], **added["settings"]},
            "budgets": sorted(set(earlier["budgets"]) | set(added["budgets"])),
            "mh_budgets": sorted({r["budget"] for r in summary if r["strategy"] == "mh"}),
            "commands": [*earlier.get("commands", [earlier["command"]]), added["command"]],
            "command": added["command"], "provenance": added["provenance"],
            "wall_seconds": round(earlier["wall_seconds"] + added["wall_seconds"], 1),
            "summary": summary, "comparisons": sorted(kept + added["comparisons"], key=lambda c: order[c["label"]])}


def budget_list(text: str) -> list[int]:
    """"2,4,8" -> [2, 4, 8]."""
    return [int(b) for b in text.split(",") if b.strip()]


def main() -> None:
    from loading import add_run_flags, loaded_model  # bench/, beside this script
    from publish import publish

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m-arith-reasoner")
    ap.add_argument("--heldout", type=int, default=40, help="problems from the generator's held-out split")
    ap.add_argument("--heldout-skip", type=int, default=0,
                    help="leave out the first K held-out problems: shards a long run over processes, each with its "
                         "own DASH_STORE, merged afterwards with `store reference-export` / `reference-import`")
    ap.add_argument("--family", default="broad", choices=("classic", "broad"))
    ap.add_argument("--handwritten", type=int, default=60,
                    help="N problems of the hand-written set, evenly spread over it (0: none)")
    ap.add_argument("--budgets", default="2,4,8", help="comma-separated budgets for best-of-n, MH and ASMC")
    ap.add_argument("--mh-budgets", default=None,
                    help="budgets for MH alone (default: --budgets); MH costs about 4x ASMC per budget, so a long "
                         "grid can add its largest MH budget later, resuming from the stored runs")
    ap.add_argument("--strategies", default=",".join(STRATEGIES),
                    help="comma-separated subset of the strategies to run (with --merge: the settings to add)")
    ap.add_argument("--merge", default=None,
                    help="an earlier result of the same model and problems: its settings that this run does not "
                         "repeat are kept, so one expensive setting can be added without the stored runs")
    ap.add_argument("--alpha", type=float, default=4.0)
    add_run_flags(ap, "decoding_accuracy")
    args = ap.parse_args()
    handle = loaded_model(args.model, args.threads)
    from backend.decoding import run_batch, settings_for
    from decoding_settings import benchmark_config, benchmark_sets  # bench/, beside this script

    sets = benchmark_sets(args.family, args.heldout, args.handwritten, args.heldout_skip)
    problems = [p for part in sets.values() for p in part]
    set_of = {p.id: name for name, part in sets.items() for p in part}
    budgets = budget_list(args.budgets)
    mh_budgets = budgets if args.mh_budgets is None else budget_list(args.mh_budgets)
    base = benchmark_config(args.tokens, args.alpha)
    chosen = [s for s in STRATEGIES if s in args.strategies.split(",")]
    settings = [setting for strategy in chosen for setting in settings_for(
        [base.replace(strategy=strategy)], {"mh": mh_budgets, "best_of_n": budgets, "asmc": budgets}.get(strategy, ()))]
    start = time.perf_counter()

    def progress(fraction: float, message: str) -> None:
        print(f"[{fraction:5.1%} {time.perf_counter() - start:6.0f}s] {message}", file=sys.stderr, flush=True)

    done = run_batch(handle, problems, settings, progress=progress)
    result = {"model": handle.display_name, "model_id": args.model, "fingerprint": handle.fingerprint,
              "command": " ".join([".venv/bin/python bench/decoding_accuracy.py", *sys.argv[1:]]),
              "sets": {name: len(part) for name, part in sets.items()}, "heldout_family": args.family,
              "max_new_tokens": args.tokens, "alpha": args.alpha, "budgets": budgets, "mh_budgets": mh_budgets,
              "settings": {s.label: dataclasses.asdict(s.config) for s in settings},
              "provenance": done.provenance, "wall_seconds": round(time.perf_counter() - start, 1),
              "summary": summarise(done.value.rows, set_of)}
    result["comparisons"] = comparisons(done.value.rows, result["summary"])
    if args.merge:
        result = merged(json.loads(Path(args.merge).read_text()), result)
    Path(args.out).write_text(json.dumps(result, indent=1, default=str) + "\n")
    publish(args.out)
    print(markdown(result))


if __name__ == "__main__":
    main()
