"""Each feature's decoding through the generation kernel against a bare transformers forward loop.

For every feature that generates, the feature's own function is timed first; then a bare loop
feeds the very same tokens, row for row, through the model with a `DynamicCache` (prefill once,
broadcast to the same batch, one `model(...)` per step, and per step the pick the feature makes: an
argmax, or a draw from the softmax for the sampling features). The ratio kernel / bare is the price of everything the kernel and the feature's
policy add on top of the framework's forwards (stop rule, finished mask, processors, weights,
segmentation). Runs are interleaved (kernel, bare, kernel, bare, ...) so both see the same
machine load; medians of wall and CPU seconds are reported.

Usage: .venv/bin/python bench/kernel.py [--model smollm2-135m-instruct] [--tokens 64] [--reps 5] [--threads 1]
(JSON to stdout and bench/results/kernel.json).

`--against generate` instead races the kernel against `transformers.generate` (bench/speed_vs_generate.py):
.venv/bin/python bench/kernel.py --against generate [--threads 1,2] [--tokens 128] [--reps 3]
(bench/results/speed_vs_generate_<model>.json).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTION = "Tom has 3 apples and buys 5 more, then gives 2 to Ann. How many apples does Tom have now?"


def _timed(fn: Callable):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bare_loop(model, prompt, rows, pick_rule: str):
    """The framework's floor: the same rows `[N, L]` teacher-forced one step at a time through a DynamicCache,
    picking a token each step (the pick is discarded) by `pick_rule`:
    argmax; sample (a draw from the softmax); weighted (what an importance-weighted sampler must compute besides:
    log p and log q = log softmax(alpha * logits) over the full vocabulary, a draw from q, both gathered at the
    draw); weighted_t1 (the same with q = p, plain sampling at temperature 1)."""
    import torch
    from transformers import DynamicCache

    generator = torch.Generator().manual_seed(0)

    def pick(logits):
        logits = logits.float()
        if pick_rule == "argmax":
            return logits.argmax(-1)
        if pick_rule == "sample":
            return torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)
        log_p = torch.log_softmax(logits, dim=-1)
        log_q = log_p if pick_rule == "weighted_t1" else torch.log_softmax(logits * 4.0, dim=-1)
        x = torch.multinomial(log_q.exp(), 1, generator=generator)
        return log_p.gather(1, x), log_q.gather(1, x)

    with torch.no_grad():
        cache = DynamicCache(config=model.config)
        logits = model(input_ids=prompt, cache=cache, use_cache=True, logits_to_keep=1).logits[:, -1]
        if rows.shape[0] > 1:
            cache.batch_repeat_interleave(rows.shape[0])
        for t in range(rows.shape[1] - 1):  # the last token is never fed (nobody reads its logits)
            pick(logits)
            logits = model(input_ids=rows[:, t:t + 1], cache=cache, use_cache=True, logits_to_keep=1).logits[:, -1]
    return rows.shape[1]


def _pad(rows: list[list[int]], pad: int):
    import torch

    width = max(1, max(len(r) for r in rows))
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows])


def features(handle, tokens: int) -> dict[str, Callable[[], tuple]]:
    """name -> a function running the feature through the kernel and returning (prompt [1, T], rows [N, L])."""
    import torch

    from backend.decoding.algorithms.smc import smc_round
    from backend.decoding.sampler import rollout
    from backend.models.rules import stop_ids
    from backend.disagreement import batched, intervention
    from backend.disagreement.pair import check_pair
    from backend.models.generate import encode_prompt, generate_text
    from backend.mt import steering
    from backend.watermark.sampling import SamplingConfig, sample_candidates

    prompt = encode_prompt(handle, QUESTION)
    stops = tuple(sorted(stop_ids(handle)))
    pad = min(stops)
    pair = check_pair(handle, handle)

    def gen():
        return torch.Generator().manual_seed(0)

    def plain():
        out = generate_text(handle, QUESTION, max_new_tokens=tokens)
        return prompt, _pad([list(out.token_ids)], pad)

    def sampling_x8():
        r = rollout(handle.model, prompt, 8, 1.0, tokens, stops, gen(), stop_at_eos=False)
        return prompt, r.tokens

    def asmc_x8():
        r = smc_round(handle.model, prompt, 8, 4.0, tokens, stops, gen(), stop_at_eos=False)
        return prompt, _pad(r.rows, pad)

    def intervention_pair():  # both models of the pair step: the bare loop gets two forwards per token too
        d = intervention.take_over(pair, prompt, intervention.FixedPositions(frozenset(), every=True), tokens,
                                fixed_length=True)
        return prompt, _pad([list(d.token_ids)], pad)

    def sweep_rows_x4():
        policies = [intervention.FixedPositions(frozenset({i})) for i in range(4)]
        rows = batched.take_over_rows(pair, prompt, policies, tokens)
        return prompt, _pad([list(r.token_ids) for r in rows], pad)

    def watermark_candidates_x4():
        cfg = SamplingConfig(max_sentence_tokens=tokens)
        cands = sample_candidates(handle, prompt, "", 4, cfg, gen(), [])
        ids = [handle.tokenizer(c.raw, add_special_tokens=False)["input_ids"] for c in cands]
        return prompt, _pad(ids, pad)

    def mt_steering():
        ids = encode_prompt(handle, "Translate to French: The cat sleeps on the warm stone near the door.")
        text = steering.generate_line(handle.model, handle.tokenizer, ids[0].tolist(), tokens)
        return ids, _pad([handle.tokenizer(text, add_special_tokens=False)["input_ids"]], pad)

    return {"plain generation": plain, "sampling x8": sampling_x8, "asmc x8": asmc_x8,
            "intervention (2 models)": intervention_pair, "sweep rows x4 (2 models)": sweep_rows_x4,
            "watermark candidates x4": watermark_candidates_x4, "mt steering": mt_steering}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default="1", help="torch CPU threads (1 is steadiest on a shared box); "
                                                   "--against generate takes a comma-separated list")
    ap.add_argument("--against", choices=("bare", "generate"), default="bare")
    ap.add_argument("--timing-prompts", type=int, default=4, help="--against generate: prompts timed per rep")
    ap.add_argument("--agreement-prompts", type=int, default=50, help="--against generate: prompts for the drift")
    ap.add_argument("--agreement-tokens", type=int, default=64)
    ap.add_argument("--only", default="", help="comma-separated feature names (default: all)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "kernel.json"))
    args = ap.parse_args()
    if args.against == "generate":
        return race_generate(args)
    args.threads = int(args.threads)

    import torch

    from backend.features import load_all
    from backend.models import load

    torch.set_num_threads(args.threads)
    load_all()
    handle = load(args.model)
    two_models = {"intervention (2 models)", "sweep rows x4 (2 models)"}
    sampled = {"sampling x8", "asmc x8", "watermark candidates x4"}
    # they also compute log p and log q of every draw (SMC / MH weights); plain sampling at temperature 1: q = p
    weighted = {"sampling x8": "weighted_t1", "asmc x8": "weighted"}
    wanted = [n.strip() for n in args.only.split(",")] if args.only else None
    results = {}
    for name, run in features(handle, args.tokens).items():
        if wanted and name not in wanted:
            continue
        run()  # warm-up
        rule = "sample" if name in sampled else "argmax"
        bares = {"bare": rule, **({"bare_same_math": weighted[name]} if name in weighted else {})}
        times: dict[str, list] = {"kernel": [], **{b: [] for b in bares}}
        shape = None
        for _ in range(args.reps):
            (prompt, rows), wall, cpu = _timed(run)
            times["kernel"].append((wall, cpu))
            forwards = 2 if name in two_models else 1
            for bare, pick_rule in bares.items():
                _, wall, cpu = _timed(lambda: [bare_loop(handle.model, prompt, rows, pick_rule)
                                               for _ in range(forwards)])
                times[bare].append((wall, cpu))
            shape = list(rows.shape)
        med = {k: {"wall_s": statistics.median(w for w, _ in v), "cpu_s": statistics.median(c for _, c in v)}
               for k, v in times.items()}
        results[name] = {"rows_x_tokens": shape, "seconds": med, "bare_pick": rule,
                         "ratio": {u: med["kernel"][u] / med["bare"][u] for u in ("wall_s", "cpu_s")}}
        if "bare_same_math" in med:
            results[name]["ratio_same_math"] = {u: med["kernel"][u] / med["bare_same_math"][u]
                                                for u in ("wall_s", "cpu_s")}
        results[name]["load_average"] = [round(x, 2) for x in os.getloadavg()]
        print(f"{name}: {shape} kernel/bare = {results[name]['ratio']['cpu_s']:.3f} (cpu)", file=sys.stderr,
              flush=True)
    if wanted and Path(args.out).exists():  # --only reruns some features: keep the others' figures
        results = {**json.loads(Path(args.out).read_text()).get("features", {}), **results}
    out = {"bench": "kernel", "model": args.model, "tokens": args.tokens, "reps": args.reps,
           "threads": args.threads, "machine": {"cpu": platform.processor() or platform.machine(),
                                                "device": str(handle.model.device)},
           "command": f".venv/bin/python bench/kernel.py --model {args.model} --tokens {args.tokens} "
                      f"--reps {args.reps} --threads {args.threads}",
           "features": results}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


def race_generate(args) -> None:
    from bench.speed_vs_generate import run

    threads = [int(t) for t in args.threads.split(",")]
    out = run(args.model, threads, args.tokens, args.reps, args.timing_prompts, args.agreement_prompts,
              args.agreement_tokens)
    out["bench"] = "speed_vs_generate"
    out["machine"] = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()}
    out["command"] = (f".venv/bin/python bench/kernel.py --against generate --model {args.model} --threads "
                      f"{args.threads} --tokens {args.tokens} --reps {args.reps} --timing-prompts "
                      f"{args.timing_prompts} --agreement-prompts {args.agreement_prompts} --agreement-tokens "
                      f"{args.agreement_tokens}")
    path = ROOT / "bench" / "results" / f"speed_vs_generate_{args.model}.json"
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
