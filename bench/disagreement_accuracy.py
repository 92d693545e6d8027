"""The issue's measured results on held-out arithmetic problems, for the embedded pair
(SmolLM2-135M-Instruct base vs the same model + the project's arithmetic LoRA).

  - exact-match accuracy of base alone, reasoning alone, guided intervention at budgets r in
    {2, 5, 10, 20}% with the realised intervention rate, the random and earliest-position controls
    (matched to guided's takeover count per problem) and the entropy-gated variant;
  - concentration of the per-token divergence along base (and reasoning) rollouts: Gini, share of
    the total in the top 10% of tokens, tokens carrying 50% / 80%, where the top 1% sit, overlap
    with high-entropy tokens, token-category enrichment;
  - failure prediction AUROC (top-k mean divergence vs base entropy);
  - the EOPD summary (gated share, loss terms) on sampled base rollouts.

Every piece is cached in the artifact store (the sweep per problem), so an interrupted run resumes.
Writes bench/results/disagreement_accuracy.json. On a 2-core CPU this takes about an hour:

    nohup .venv/bin/python bench/disagreement_accuracy.py > data/cache/disagreement_accuracy.log 2>&1 &
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from backend.disagreement.analysis import AnalysisConfig, analyze  # noqa: E402
from backend.disagreement.calibration import CalibrationConfig, GateConfig  # noqa: E402
from backend.disagreement.eopd import EopdConfig, EopdParams, eopd  # noqa: E402
from backend.disagreement.guided import InterveneConfig, intervene  # noqa: E402
from backend.disagreement.pair import load_pair  # noqa: E402
from backend.disagreement.rollout import ProblemSet  # noqa: E402
from backend.disagreement.policies import sweep_policies  # noqa: E402
from backend.disagreement.sweep import SweepConfig, sweep  # noqa: E402
from backend.disagreement.sweep_stats import cell_stats  # noqa: E402
from backend.features import load_all  # noqa: E402
from bench.output import write_result  # noqa: E402

BASE, REASONER = "smollm2-135m-instruct", "smollm2-135m-arith-reasoner"
START = time.perf_counter()


def log(fraction: float, message: str) -> None:
    print(f"[{time.perf_counter() - START:7.0f} s] {fraction:5.1%} {message}", file=sys.stderr, flush=True)


def _r(x, digits: int = 4):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), digits)


def _concentration(part) -> dict:
    c = part.concentration
    peak = int(np.argmax(c.position_hist))
    width = 1.0 / len(c.position_hist)
    return {"rollouts": part.n_rollouts, "accuracy": _r(part.accuracy), "tokens": c.n_tokens, "gini": _r(c.gini),
            "share_in_top10pct": _r(c.share_in_top10), "tokens_carrying_50pct": _r(c.share_tokens_50),
            "tokens_carrying_80pct": _r(c.share_tokens_80),
            "top1pct_tokens": len(c.top_relative_positions),
            "top1pct_mean_relative_position": _r(c.top_relative_positions.mean()),
            "top1pct_position_peak_bin": [round(peak * width, 3), round((peak + 1) * width, 3)],
            "top1pct_high_entropy_share": _r(c.top_high_entropy_share),
            "high_entropy_chance": _r(1 - c.high_entropy_quantile),
            "spearman_divergence_vs_base_entropy": _r(c.entropy_correlation),
            "category_enrichment_top1pct": {k: _r(v, 2) for k, v in c.category_enrichment().items()},
            "failure_auroc": None if part.failure is None else {
                "top_k": part.failure.top_k, "wrong": part.failure.n_wrong, "right": part.failure.n_right,
                **{k: _r(v) for k, v in part.failure.auroc.items()}}}


def _stop_takeovers(pair, problems, rates, gate, calibration, max_new_tokens) -> dict[float, dict]:
    """Per budget: guided decoded problem by problem; how many outputs end because the reasoning model wrote the
    stop token at a takeover, and the realised rate with each such ending counted as one more takeover and token."""
    out = {}
    for r in rates:
        done = [intervene(pair, InterveneConfig(p.question, p.answer, "guided", r, gate, calibration,
                                                max_new_tokens)).value for p in problems.problems()]
        taken, tokens, ended = (sum(int(v.intervened.sum()) for v in done), sum(len(v.token_ids) for v in done),
                                sum(v.stop_taken for v in done))
        log(0.0, f"stops at r = {r}: {ended} of {len(done)} outputs")
        out[r] = {"one_by_one_accuracy": _r(np.mean([bool(v.correct) for v in done])),
                  "one_by_one_rate": _r(taken / tokens), "stop_takeovers": ended, "outputs": len(done),
                  "realised_rate_counting_stops": _r((taken + ended) / (tokens + ended))}
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="held-out problems")
    parser.add_argument("--sweep-n", type=int, default=None,
                        help="held-out problems of the intervention sweep (default: --n); each costs one batched "
                             "decode per (policy, budget) cell, the longest part of the run")
    parser.add_argument("--cal-n", type=int, default=32, help="training problems for the gate calibration")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--rates", default="2,5,10,20", help="budgets r in percent")
    parser.add_argument("--eopd-n", type=int, default=20)
    parser.add_argument("--base", default=BASE)
    parser.add_argument("--reasoning", default=REASONER)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "disagreement_accuracy.json"))
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--window", type=int, default=0,
                        help="gate window W: 0 (threshold only) is the page's default for the embedded pair, "
                             "8 the paper's spike rule (the setting of the attempt-1 figures in the README)")
    parser.add_argument("--capped", action="store_true", help="online budget cap on the guided policy")
    parser.add_argument("--decisive", action="store_true",
                        help="take over (and count) only steps where the two greedy tokens differ; the controls too")
    parser.add_argument("--signal", default="ce", help="gate signal of the guided policy")
    parser.add_argument("--stops", action="store_true",
                        help="also decode guided one problem at a time (the `intervene` verb, stored) to count the "
                             "outputs that end at a takeover of the stop token, which the sweep's rate leaves out")
    parser.add_argument("--sweep-only", action="store_true",
                        help="the intervention sweep alone (no concentration analysis, no EOPD): for a gate "
                             "variant, written to its own --out")
    opts = parser.parse_args(argv)
    load_all()
    if opts.threads:
        torch.set_num_threads(opts.threads)
    pair = load_pair(opts.base, opts.reasoning, log)
    problems = ProblemSet(opts.n, "heldout", 0)
    rates = tuple(float(r) / 100 for r in opts.rates.split(","))
    gate = GateConfig(opts.signal, opts.window, "partial", opts.capped, opts.decisive)
    calibration = CalibrationConfig(ProblemSet(opts.cal_n, "train", 1), opts.max_new_tokens)
    timings = {}

    t = time.perf_counter()
    analyses = {} if opts.sweep_only else {
        signal: analyze(pair, AnalysisConfig(problems, opts.max_new_tokens, signal), log).value
        for signal in ("ce", "kl_base_reason")}
    timings["analysis_s"] = round(time.perf_counter() - t, 1)
    t = time.perf_counter()
    sweep_problems = problems if opts.sweep_n is None else ProblemSet(opts.sweep_n, "heldout", 0)
    result = sweep(pair, SweepConfig(sweep_problems, rates, sweep_policies(), gate, calibration,
                                     opts.max_new_tokens), log)
    timings["sweep_s"] = round(time.perf_counter() - t, 1)
    stops = _stop_takeovers(pair, sweep_problems, rates, gate, calibration, opts.max_new_tokens) if opts.stops else {}
    t = time.perf_counter()
    e = None if opts.sweep_only else eopd(
        pair, EopdConfig(ProblemSet(opts.eopd_n, "heldout", 0), EopdParams(), opts.max_new_tokens, 1.0), log)
    timings["eopd_s"] = round(time.perf_counter() - t, 1)

    s = result.value
    by_policy: dict[str, list] = {}
    for p, c in zip(s.points, cell_stats(s)):
        by_policy.setdefault(p.policy, []).append({"budget": p.budget, "accuracy": _r(p.accuracy),
                                                   "right": c.right, "scored": c.scored,
                                                   "wilson95": [_r(c.low), _r(c.high)], "gap_share": _r(c.gap_share),
                                                   "realised_rate": _r(p.rate), "mean_tokens": _r(p.mean_length, 1),
                                                   "tau": _r(p.tau), "lambda": _r(p.lam),
                                                   **({} if math.isnan(c.p_value) else {"vs_random": {
                                                       "only_this": c.only_policy, "only_random": c.only_control,
                                                       "mcnemar_p": float(f"{c.p_value:.3g}")}}),
                                                   **(stops.get(p.budget, {}) if p.policy == "guided" else {})})
    out = {
        "pair": pair.label,
        "problems": {"analysed": opts.n, "heldout": s.n_problems, "skipped": len(s.skipped),
                     "calibration_train": opts.cal_n, "max_new_tokens": opts.max_new_tokens, "decoding": "greedy"},
        "accuracy": {"base": _r(s.base_accuracy), "reasoning": _r(s.reasoning_accuracy), **by_policy},
        # the decisive rate at which guided reproduces the reasoning model: its path's tokens the base would change
        "reasoning_differs_share": _r(s.reasoning_differs),
        "gate": {"signal": gate.signal, "window": gate.window, "early_rule": gate.early, "capped": gate.capped,
                 "decisive": gate.decisive},
        "timings": {**timings, "cached": {"sweep": result.cached, "eopd": None if e is None else e.cached}},
        "torch_threads": torch.get_num_threads(),
        "command": " ".join([".venv/bin/python bench/disagreement_accuracy.py", *(argv or sys.argv[1:])]),
    }
    if not opts.sweep_only:
        summary = e.value.summary
        out["concentration"] = {signal: {part.source: _concentration(part) for part in a.per_source}
                                for signal, a in analyses.items()}
        out["eopd"] = {"rollouts": len(e.value.problem_ids), "temperature": 1.0, "tau": 0.8, "top_k": 16,
                       "alpha": 1.0, "tokens": summary.n_tokens, "gated_share": _r(summary.gated_share),
                       "mean_teacher_entropy": _r(summary.mean_teacher_entropy),
                       "mean_reverse_kl": _r(summary.mean_reverse_kl),
                       "mean_forward_kl_topk_gated": _r(summary.mean_forward_kl_topk_gated),
                       "loss_eopd": _r(summary.loss_eopd), "loss_plain_reverse_kl": _r(summary.loss_plain)}
    return write_result(opts.out, out)


if __name__ == "__main__":
    main()
