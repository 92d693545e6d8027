"""RC (reasoning-summary cycles) against plain decoding at the same total budget, past the adapter's training length.

Problems: `backend.tasks.long_chains` held-out problems of 4-6 operations (`--steps` for one length), whose worked
solutions run to about 190-280 tokens, where the arithmetic adapter was trained on one- to three-step problems
(worked solutions up to about 125 tokens). Per problem:
  - RC, greedy: `--cycles` cycles of up to `--budget` reasoning tokens, a summary of up to `--summary-tokens` after
    each but the last; the answer after every cycle;
  - plain greedy decoding allowed RC's whole budget (cycles x budget + (cycles - 1) x summary tokens) in one go.
    Greedy is deterministic, so plain decoding at a smaller budget is this decode cut at that many tokens: its
    answer at the nominal budget of cycle k (k x budget + (k - 1) x summary tokens) is read from that prefix.
`--set trained3` instead takes the everyday family's three-step held-out problems (the adapter's longest training
length) with a per-cycle budget below their solutions' length (`--budget 48`): the same question at the scale the
adapter knows, where one cycle cannot finish and only the summaries can carry the work to the next.
Accuracy after cycles 1, 2 and 4 (those run) and plain decoding at the same budgets, with Wilson 95% intervals, and
exact McNemar tests on the same problems (RC cycle k vs plain at the same budget; RC cycle k vs cycle 1).

Resumable: each finished problem is appended to `--partial` (JSON lines) and skipped on restart; every decode also
goes through the store. The result JSON is rewritten after every problem, so a stopped run still reports its n.

Usage: nohup nice -n 15 .venv/bin/python bench/rc_cycles.py --n 30 --threads 1 &
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.significance import discordant, mcnemar_exact, wilson_interval  # noqa: E402

DEFAULT_OUT = "bench/results/rc_cycles.json"


def nominal_budget(k: int, budget: int, summary: int) -> int:
    """Generated tokens RC may have spent by the end of cycle k's reasoning."""
    return k * budget + (k - 1) * summary


def accuracy(flags: list[bool]) -> dict:
    lo, hi = wilson_interval(sum(flags), len(flags))
    return {"right": sum(flags), "n": len(flags), "accuracy": round(sum(flags) / len(flags), 4) if flags else None,
            "wilson95": [round(lo, 4), round(hi, 4)]}


def paired(a: dict[str, bool], b: dict[str, bool], name_a: str, name_b: str) -> dict:
    wins, losses = discordant(a, b)
    return {"a": name_a, "b": name_b, "only_a_right": wins, "only_b_right": losses,
            "mcnemar_p": round(mcnemar_exact(wins, losses), 4)}


def summarise(rows: list[dict], cycles: int, budget: int, summary: int) -> dict:
    ks = [k for k in (1, 2, 4, 8) if k <= cycles] + ([cycles] if cycles not in (1, 2, 4, 8) else [])
    table, tests = [], []
    for k in ks:
        rc = {r["id"]: r["rc_correct"][min(k, len(r["rc_correct"])) - 1] for r in rows}
        plain = {r["id"]: r["plain_correct"][str(k)] for r in rows}
        spent = [r["rc_cycle_tokens"][min(k, len(r["rc_cycle_tokens"])) - 1] for r in rows]
        table.append({"cycle": k, "budget_tokens": nominal_budget(k, budget, summary),
                      "rc": accuracy(list(rc.values())), "plain": accuracy(list(plain.values())),
                      "rc_mean_tokens": round(sum(spent) / len(spent), 1) if spent else None})
        tests.append(paired(rc, plain, f"RC after cycle {k}", f"plain at {nominal_budget(k, budget, summary)} tokens"))
        if k > 1:
            first = {r["id"]: r["rc_correct"][0] for r in rows}
            tests.append(paired(rc, first, f"RC after cycle {k}", "RC after cycle 1"))
    plain_tokens = [r["plain_tokens"] for r in rows]
    return {"by_cycle": table, "tests": tests,
            "plain_mean_tokens": round(sum(plain_tokens) / len(plain_tokens), 1) if rows else None,
            "answer_changed_after_cycle_1": sum(len(set(r["rc_answers"])) > 1 for r in rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m-arith-reasoner-everyday")
    ap.add_argument("--n", type=int, default=30, help="held-out long-chain problems")
    ap.add_argument("--set", dest="problem_set", choices=("long", "trained3"), default="long",
                    help="long: 4-6-step chains past the training length; trained3: three-step everyday problems")
    ap.add_argument("--steps", type=int, default=None, help="long: operations per problem (default: 4-6 mixed)")
    ap.add_argument("--seed", type=int, default=0, help="problem draw")
    ap.add_argument("--budget", type=int, default=128, help="RC's per-cycle reasoning budget (tokens)")
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--summary-tokens", type=int, default=64)
    ap.add_argument("--summary-instruction", default=None, help="RC's summarisation prompt (default: RC's own)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--partial", default=None, help="JSON lines of finished problems (default: data/cache/bench/"
                                                    "<out name>[.shard].partial.jsonl)")
    ap.add_argument("--shard", default="0/1", help="i/k: run problems i, i+k, ... only (two processes share the "
                                                   "work; a run without --shard then gathers every shard's rows)")
    ap.add_argument("--gather", action="store_true", help="compute nothing: write the result from the problems "
                                                          "finished so far (a run stopped for time)")
    ap.add_argument("--reverse", action="store_true", help="last problem first (a second process meets the first "
                                                           "in the middle; finished decodes come from the store)")
    args = ap.parse_args()

    import torch

    import backend.decoding.algorithms  # noqa: F401  (registers the strategies; no other feature is needed)
    from backend.decoding import DecodeConfig, run_one
    from backend.decoding.algorithms.rc import planned_tokens
    from backend.models import load
    from backend.tasks.arithmetic import extract_answer, generate_problems
    from backend.tasks.long_chains import long_problems
    from bench.output import write_result

    torch.set_num_threads(args.threads)
    handle = load(args.model)
    if args.problem_set == "long":
        problems = long_problems(args.n, args.steps, "heldout", args.seed)
    else:
        problems = generate_problems(args.n, "heldout", args.seed, difficulty=3, family="everyday", style="worked")
    extra = {"cycles": args.cycles, "summary_tokens": args.summary_tokens}
    if args.summary_instruction:
        extra["summary_instruction"] = args.summary_instruction
    rc_config = DecodeConfig(strategy="rc", max_new_tokens=args.budget, extra=extra)
    total = planned_tokens(rc_config)
    plain_config = DecodeConfig(strategy="greedy", max_new_tokens=total)
    shard, shards = (int(x) for x in args.shard.split("/"))
    out = Path(args.out)
    folder = ROOT / "data" / "cache" / "bench"
    suffix = f".{shard}of{shards}" if shards > 1 else ""
    partial = Path(args.partial or folder / f"{out.stem}{suffix}.partial.jsonl")
    partial.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    gathered = [folder / f"{out.stem}.partial.jsonl", *sorted(folder.glob(f"{out.stem}.*of*.partial.jsonl"))]
    for path in [partial] if args.partial or shards > 1 else gathered:
        for line in path.read_text().splitlines() if path.exists() else []:
            row = json.loads(line)
            done[row["id"]] = row
    if shards > 1:
        out = out.with_name(f"{out.stem}{suffix}.json")
        out = folder / out.name  # a shard's own result stays out of bench/results
    argv = [a for i, a in enumerate(sys.argv[1:])
            if a not in ("--shard", "--reverse", "--gather") and sys.argv[i] != "--shard"]
    command = "nice -n 15 .venv/bin/python bench/rc_cycles.py " + " ".join(argv)

    def result(rows: list[dict], finished: bool) -> dict:
        return {"model_id": handle.id, "fingerprint": handle.fingerprint, "command": command.strip(),
                "problems": {"generator": "backend.tasks.long_chains (collection scenario)"
                             if args.problem_set == "long" else "generate_problems(family='everyday', difficulty=3)",
                             "set": args.problem_set, "split": "heldout", "seed": args.seed,
                             "steps": (args.steps or "4-6") if args.problem_set == "long" else 3, "n": len(rows),
                             "n_requested": args.n, "finished": finished},
                "rc": {"budget": args.budget, "cycles": args.cycles, "summary_tokens": args.summary_tokens,
                       "summary_instruction": rc_config.extra.get("summary_instruction") or "RC's default",
                       "total_tokens": total, "decoding": "greedy"},
                "plain": {"strategy": "greedy", "max_new_tokens": total,
                          "smaller_budgets": "the same greedy decode cut at that many tokens"},
                "threads": args.threads, **summarise(rows, args.cycles, args.budget, args.summary_tokens),
                "rows": rows}

    rows = []
    for i, problem in sorted(enumerate(problems), reverse=args.reverse, key=lambda ip: ip[0]):
        if i % shards != shard:
            continue
        if problem.id in done:
            if shards == 1:
                rows.append(done[problem.id])
            continue
        if args.gather:
            continue
        start = time.time()
        rc = run_one(handle, problem, rc_config).value
        plain = run_one(handle, problem, plain_config).value
        plain_correct = {}
        for k in range(1, args.cycles + 1):
            cut = plain.token_ids[:nominal_budget(k, args.budget, args.summary_tokens)]
            text = handle.tokenizer.decode(list(cut), skip_special_tokens=True)
            plain_correct[str(k)] = extract_answer(text) == problem.answer
        row = {"id": problem.id, "steps": problem.difficulty, "answer": problem.answer,
               "solution_tokens": len(handle.tokenizer(problem.solution)["input_ids"]),
               "rc_answers": [c.answer for c in rc.cycles], "rc_correct": list(rc.cycle_correct),
               "rc_cycle_tokens": list(rc.cycle_tokens), "rc_tokens": rc.tokens_generated,
               "rc_summaries": [c.summary for c in rc.cycles],
               "plain_answer": plain.answer, "plain_correct": plain_correct, "plain_tokens": plain.tokens_generated}
        if shards == 1 and args.partial is None:
            partial = folder / f"{out.stem}.partial.jsonl"
        with partial.open("a") as f:
            f.write(json.dumps(row) + "\n")
        rows.append(row)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result(rows, False), indent=1) + "\n")
        print(f"[{i + 1}/{len(problems)}] {problem.id}: RC {row['rc_answers']} plain {plain.answer} "
              f"(answer {problem.answer}) {time.time() - start:.0f} s", flush=True)
    write_result(out, result(rows, len(rows) == len(problems)))


if __name__ == "__main__":
    main()
