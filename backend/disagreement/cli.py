"""`python -m backend disagree analyze|position|intervene|sweep|eopd|learnability ... --json`."""
from __future__ import annotations

import math
import sys

from backend.cli.params import add_flags
from backend.disagreement.analysis import AnalysisConfig, TraceConfig, analyze, trace
from backend.disagreement.calibration import CalibrationConfig, GateConfig
from backend.disagreement.eopd import EopdConfig, EopdParams, eopd
from backend.disagreement.guided import InterveneConfig, intervene
from backend.disagreement.learnability import LearnabilityConfig, learnability
from backend.disagreement.pair import default_reasoning_id, load_pair
from backend.disagreement.position import GateAtConfig, PositionConfig, gate_at, position
from backend.disagreement.rollout import ProblemSet
from backend.disagreement.scoring import RolloutConfig
from backend.disagreement.policies import sweep_policies
from backend.disagreement.sweep import SweepConfig, sweep
from backend.errors import UserError
from backend.models import default_model_id, skipped_line
from backend.params import default_of, help_of


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def _pair(args):
    base = args.base or default_model_id()
    return load_pair(base, args.reasoning or default_reasoning_id(base), _progress)


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 6)


def _problems(args) -> ProblemSet:
    return ProblemSet(args.n, args.split, args.seed, args.difficulty)


def _calibration(args) -> CalibrationConfig:
    return CalibrationConfig(ProblemSet(args.cal_n, "train", args.seed + 1, args.difficulty), args.max_new_tokens)


def _gate(args) -> GateConfig:
    return GateConfig(args.signal, args.window, args.early, args.capped, args.decisive)


def _budgets(text: str) -> tuple[float, ...]:
    """'2,5,10,20' (percent) or '0.02,0.05' (fractions)."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UserError(f"Budgets must be numbers separated by commas, got {text!r}.") from None
    if not values:
        raise UserError("Give at least one budget, e.g. 0.1 or 10 (percent).")
    return tuple(v / 100 if v > 1 else v for v in values)


def _rollout_json(r) -> dict:
    return {"text": r.text, "correct": r.correct, "tokens": len(r.token_ids),
            "per_token": [{"token": tok, **{k: _num(v[i]) for k, v in r.signals.items()}}
                          for i, tok in enumerate(r.tokens)]}


def cmd_analyze(args) -> dict:
    pair = _pair(args)
    if args.question is not None:  # an empty --question is a mistake, not a request for the batch
        out = trace(pair, TraceConfig(args.question, args.answer, args.max_new_tokens), _progress)
        return {"pair": pair.label, "provenance": out.provenance, "base": _rollout_json(out.value.base),
                "reasoning": _rollout_json(out.value.reasoning)}
    out = analyze(pair, AnalysisConfig(_problems(args), args.max_new_tokens, args.signal), _progress)
    parts = []
    for s in out.value.per_source:
        c = s.concentration
        parts.append({"source": s.source, "rollouts": s.n_rollouts, "accuracy": _num(s.accuracy),
                      "tokens": c.n_tokens, "gini": _num(c.gini), "share_tokens_50": _num(c.share_tokens_50),
                      "share_tokens_80": _num(c.share_tokens_80), "share_in_top10": _num(c.share_in_top10),
                      "top1pct_mean_relative_position": _num(c.top_relative_positions.mean()),
                      "top1pct_high_entropy_share": _num(c.top_high_entropy_share),
                      "entropy_spearman": _num(c.entropy_correlation),
                      "category_enrichment": {k: _num(v) for k, v in c.category_enrichment().items()},
                      "failure_auroc": None if s.failure is None else
                      {k: _num(v) for k, v in s.failure.auroc.items()}})
    _say_skipped(out.value.skipped)
    return {"pair": pair.label, "signal": out.value.signal, "provenance": out.provenance, "sources": parts,
            "skipped": list(out.value.skipped)}


def cmd_position(args) -> dict:
    """One position of a traced rollout: both models' top-k, every divergence, and the gate there."""
    traced = TraceConfig(args.question, args.answer, args.max_new_tokens)
    config = PositionConfig(traced, args.position, args.source, args.top_k)  # checked before any model loads
    check = None if args.no_gate else GateAtConfig(traced, args.position, args.source, _gate(args),
                                                   _budgets(args.budget)[0], _calibration(args))
    pair = _pair(args)
    out = position(pair, config, _progress)
    result = {"pair": pair.label, "provenance": out.provenance, **out.value.to_json()}
    if check is not None:
        gate = gate_at(pair, check, _progress)
        result["gate"] = {**gate.value.to_json(), "provenance": gate.provenance}
    return result


def cmd_intervene(args) -> dict:
    pair = _pair(args)
    budget = _budgets(args.budget)[0]
    out = intervene(pair, InterveneConfig(args.question, args.answer, args.policy, budget, _gate(args),
                                          _calibration(args), args.max_new_tokens, args.seed), _progress)
    v = out.value
    return {"pair": pair.label, "policy": v.policy, "budget": budget, "text": v.text, "correct": v.correct,
            "tokens": len(v.token_ids), "interventions": int(v.intervened.sum()), "rate": _num(v.rate),
            "tau": _num(v.threshold.tau) if v.threshold else None,
            "lambda": _num(v.threshold.lam) if v.threshold else None,
            "taken_over": [{"position": int(i), "token": v.tokens[i]} for i in v.intervened.nonzero()[0]],
            "forward_passes": {"base": v.base_passes, "reasoning": v.reasoning_passes},
            "provenance": out.provenance}


def _say_skipped(skipped) -> None:
    """The context rule for batches: problems skipped are counted on stderr (and listed in the JSON)."""
    if skipped:
        print(skipped_line(skipped), file=sys.stderr)


def cmd_sweep(args) -> dict:
    pair = _pair(args)
    policies = tuple(p.strip() for p in args.policies.split(",") if p.strip())
    config = SweepConfig(_problems(args), _budgets(args.rates), policies, _gate(args), _calibration(args),
                         args.max_new_tokens, args.seed)
    out = sweep(pair, config, _progress)
    v = out.value
    _say_skipped(v.skipped)
    return {"pair": pair.label, "problems": v.n_problems, "base_accuracy": _num(v.base_accuracy),
            "reasoning_accuracy": _num(v.reasoning_accuracy), "provenance": out.provenance,
            "points": [{"policy": p.policy, "budget": p.budget, "accuracy": _num(p.accuracy), "rate": _num(p.rate),
                        "mean_length": _num(p.mean_length), "tau": _num(p.tau), "lambda": _num(p.lam)}
                       for p in v.points], "skipped": list(v.skipped)}


def cmd_eopd(args) -> dict:
    pair = _pair(args)
    config = EopdConfig(_problems(args), EopdParams(args.tau, args.top_k, args.alpha), args.max_new_tokens,
                        args.temperature, args.seed)
    out = eopd(pair, config, _progress)
    s = out.value.summary
    _say_skipped(out.value.skipped)
    return {"pair": pair.label, "provenance": out.provenance, "rollouts": len(out.value.problem_ids),
            "tokens": s.n_tokens, "gated_share": _num(s.gated_share),
            "mean_teacher_entropy": _num(s.mean_teacher_entropy), "mean_reverse_kl": _num(s.mean_reverse_kl),
            "mean_forward_kl_topk_gated": _num(s.mean_forward_kl_topk_gated), "loss_eopd": _num(s.loss_eopd),
            "loss_plain_reverse_kl": _num(s.loss_plain), "skipped": list(out.value.skipped)}


def cmd_learnability(args) -> dict:
    layers = LearnabilityConfig.parse_layers(args.layers)
    config = LearnabilityConfig(n=args.n, max_new_tokens=args.max_new_tokens, sketch_dim=args.sketch_dim,
                                layers=layers, seed=args.seed)  # checked before any model loads
    pair = _pair(args)
    out = learnability(pair, config, _progress)
    v, t = out.value, out.value.test
    _say_skipped(v.skipped)
    return {"pair": pair.label, "data": v.data, "gradient_of": v.gradient_of, "provenance": out.provenance,
            "examples": [{"problem_id": r.problem_id, "category": r.category, "base_answer": r.base_answer,
                          "reasoning_answer": r.reasoning_answer, "answer": r.answer, "loss": _num(r.loss),
                          "mean_similarity": _num(m)} for r, m in zip(v.records, v.mean_similarity)],
            "unlearnable_vs_learned": {"unlearnable": t.n_unlearnable, "learned": t.n_learned,
                                       "median_similarity_unlearnable": _num(t.median_unlearnable),
                                       "median_similarity_learned": _num(t.median_learned),
                                       "mann_whitney_p": _num(t.p_value), "auroc_low_similarity": _num(t.auroc)},
            "skipped": list(v.skipped)}


def _common(sub, batch: bool = True) -> None:
    sub.add_argument("--base", help="registry id of the base model (default: the default model)")
    sub.add_argument("--reasoning", help="registry id of the reasoning model (default: the project's reasoner)")
    add_flags(sub, RolloutConfig, ["max_new_tokens", "seed"],
              seed={"help": "seed of the problems (calibration: seed + 1) and of random positions "
                            "(default: %(default)s)"})
    add_flags(sub, ProblemSet, ["difficulty"], difficulty={"type": int, "choices": (1, 2, 3)})
    if batch:
        add_flags(sub, ProblemSet, ["n", "split"], n={"default": 20})


def _gate_args(sub) -> None:
    add_flags(sub, GateConfig, ["signal", "window", "early", "capped", "decisive"])
    sub.add_argument("--cal-n", type=int, default=default_of(CalibrationConfig, "problems").n,
                     help=help_of(CalibrationConfig, "problems") + " (default: %(default)s)")


def add_commands(subparsers) -> None:
    # "disagreement" (the feature's name, as issue texts write it) is accepted for "disagree"
    parser = subparsers.add_parser("disagree", aliases=["disagreement"],
                                   help="base vs reasoning model: disagreement, intervention, EOPD, learnability")
    actions = parser.add_subparsers(dest="action", required=True)
    sub = actions.add_parser("analyze", help="per-token divergences (one --question) or concentration (a batch)")
    _common(sub)
    sub.add_argument("--question", help="trace one typed problem instead of a batch")
    sub.add_argument("--answer", type=int)
    add_flags(sub, AnalysisConfig, ["signal"])
    sub.set_defaults(handler=cmd_analyze)
    sub = actions.add_parser("position", help="one position of a traced problem: both models' top-k next tokens, "
                                              "every divergence, and whether the guided gate fires there")
    _common(sub, batch=False)
    _gate_args(sub)
    sub.add_argument("--question", required=True)
    sub.add_argument("--answer", type=int)
    add_flags(sub, PositionConfig, {"position": "--position", "source": "--source", "top_k": "--top-k"})
    sub.add_argument("--budget", default=f"{default_of(InterveneConfig, 'budget'):g}",
                     help="the gate's budget r, e.g. 0.1 or 10 (percent)")
    sub.add_argument("--no-gate", action="store_true", help="skip the gate (it calibrates on training rollouts)")
    sub.set_defaults(handler=cmd_position)
    sub = actions.add_parser("intervene", help="decode one problem with a takeover policy")
    _common(sub, batch=False)
    _gate_args(sub)
    sub.add_argument("--question", required=True)
    sub.add_argument("--answer", type=int)
    add_flags(sub, InterveneConfig, ["policy"])
    sub.add_argument("--budget", default=f"{default_of(InterveneConfig, 'budget'):g}",
                     help="r, e.g. 0.1 or 10 (percent)")
    sub.set_defaults(handler=cmd_intervene)
    sub = actions.add_parser("sweep", help="accuracy vs intervention rate for guided / entropy / random / early")
    _common(sub)
    _gate_args(sub)
    sub.add_argument("--rates", default=",".join(f"{100 * r:g}" for r in default_of(SweepConfig, "rates")),
                     help="budgets in percent (or fractions)")
    sub.add_argument("--policies", default=",".join(default_of(SweepConfig, "policies")),
                     help=f"comma-separated, of {', '.join(sweep_policies())}")
    sub.set_defaults(handler=cmd_sweep)
    sub = actions.add_parser("eopd", help="entropy-aware on-policy distillation signals over a batch")
    _common(sub)
    add_flags(sub, EopdParams, {"tau": "--tau", "top_k": "--top-k", "alpha": "--alpha"})
    add_flags(sub, EopdConfig, ["temperature"])
    sub.set_defaults(handler=cmd_eopd)
    sub = actions.add_parser("learnability", help="gradient similarity of the adapter's training examples: "
                                                  "unlearnable (both models fail) vs learned")
    sub.add_argument("--base", help="registry id of the base model (default: the default model)")
    sub.add_argument("--reasoning", help="registry id of the reasoning model (default: the project's reasoner)")
    add_flags(sub, LearnabilityConfig, ["n", "max_new_tokens", "sketch_dim", "seed"])
    sub.add_argument("--layers", default="", help=help_of(LearnabilityConfig, "layers") + ", e.g. 28,29")
    sub.set_defaults(handler=cmd_learnability)
