"""Learnability (issue 36, RLVR): mean gradient similarity of unlearnable against learned training examples."""
from __future__ import annotations

import math

import numpy as np

from bench.report import PY, Body, Ctx, Section, num

KINDS = {"easy": "easy (the base solves it)", "learned": "learned (base fails, reasoning solves)",
         "unlearnable": "unlearnable (both fail)"}


def _hanley_mcneil(auc: float, n_pos: int, n_neg: int) -> tuple[float, float]:
    """95% interval of an AUROC by the Hanley-McNeil standard error."""
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    se = math.sqrt((auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc))
                   / (n_pos * n_neg))
    return max(0.0, auc - 1.96 * se), min(1.0, auc + 1.96 * se)


def learnability(ctx: Ctx) -> Body:
    r = ctx.load("learnability.json")
    t = r["test"]
    partial = (f" (a partial run: {r['examples_done']} of the {r['examples_wanted']} examples asked for; the run "
               "resumes from its cached examples)") if r["examples_done"] < r["examples_wanted"] else ""
    lines = [f"{r['pair']}: {r['data']}{partial}. Gradients of the reasoning model's loss on each problem's correct "
             f"solution (its training target) with respect to {r['gradient_of']}; each example's mean cosine "
             f"similarity to the others. Base greedy accuracy on these problems "
             f"{num(100 * r['base_accuracy'], 1)}%, reasoning {num(100 * r['reasoning_accuracy'], 1)}%.", ""]
    lines += ["| examples | count | mean similarity to the rest: min / Q1 / median / Q3 / max | "
              "mean loss (nats/token) |", "|---|---|---|---|"]
    for kind, label in KINDS.items():
        values = np.array(r["groups"][kind]["mean_similarity"], dtype=float)
        spread = " / ".join(f"{v:.4f}" for v in np.quantile(values, [0, .25, .5, .75, 1])) if values.size else "–"
        lines.append(f"| {label} | {values.size} | {spread} | {num(r['mean_loss'].get(kind), 3) or '–'} |")
    lines.append("")
    if t["auroc"] is not None:
        low, high = _hanley_mcneil(t["auroc"], t["n_unlearnable"], t["n_learned"])
        direction = ("lower" if t["median_unlearnable"] < t["median_learned"] else "higher")
        from scipy.stats import mannwhitneyu  # the JSON rounds p to 4 places: recomputed from the values it lists

        p = mannwhitneyu(r["groups"]["unlearnable"]["mean_similarity"], r["groups"]["learned"]["mean_similarity"],
                         alternative="two-sided").pvalue
        lines.append(f"Unlearnable ({t['n_unlearnable']}) against learned ({t['n_learned']}): median similarity "
                     f"{t['median_unlearnable']:.4f} vs {t['median_learned']:.4f} ({direction} for the unlearnable); "
                     f"two-sided Mann-Whitney p = {p:.2g}; AUROC of low similarity as a predictor of "
                     f"unlearnability **{t['auroc']:.2f}** (95% interval {low:.2f}-{high:.2f}, Hanley-McNeil; 0.5 is "
                     "no signal).")
    else:
        lines.append("Too few unlearnable or learned examples for the test.")
    rows = r.get("per_example") or []
    if rows and r.get("auroc_high_loss") is not None:
        from scipy.stats import spearmanr

        rho = spearmanr([e["loss"] for e in rows], [e["mean_similarity"] for e in rows]).statistic
        steps = {kind: {d: sum(1 for e in rows if e["category"] == kind and e["difficulty"] == d) for d in (1, 2, 3)}
                 for kind in ("learned", "unlearnable")}
        from backend.disagreement.learnability_stats import beyond_loss

        pairs = [e for e in rows if e["category"] in ("learned", "unlearnable")]
        extra = beyond_loss(np.array([e["mean_similarity"] for e in pairs]), np.array([e["loss"] for e in pairs]),
                            np.array([e["category"] == "unlearnable" for e in pairs]))
        verdict = ("adds to it" if extra.p_value < 0.05 else "adds nothing detectable to it")
        lines += ["", f"Read beside it: the reasoning model's own loss on the correct solution predicts "
                      f"unlearnability with AUROC {r['auroc_high_loss']:.2f}, and across all examples the loss and "
                      f"the mean similarity have Spearman ρ = {rho:.2f}: low similarity goes partly with a poorly "
                      f"fitted solution. Given the loss, similarity {verdict}: a logistic regression of unlearnable "
                      f"vs learned on the log loss, with the mean similarity added, gives it a coefficient of "
                      f"{extra.similarity_coefficient:+.2f} per standard deviation (likelihood-ratio test "
                      f"p = {extra.p_value:.2g}, {extra.n} examples). Steps per "
                      "problem (1 / 2 / 3): learned "
                      + " / ".join(str(steps["learned"][d]) for d in (1, 2, 3)) + ", unlearnable "
                      + " / ".join(str(steps["unlearnable"][d]) for d in (1, 2, 3)) + "."]
    if r.get("examples_computed"):
        minutes = r["seconds_this_process"] / 60
        lines += ["", f"Time: this run computed {r['examples_computed']} examples (both models' greedy rollouts, "
                      f"{r['rollout_batch']} problems side by side, then each gradient) in **{minutes:.1f} min** "
                      f"on {r['threads']} thread(s) of a {r['cpus']}-core CPU "
                      f"({r['seconds_this_process'] / r['examples_computed']:.1f} s per example; load average "
                      f"{r['load_average']} at the end)."]
    threads = r.get("threads", 1)
    return Body(lines, [f"DASH_STORE=data/cache/learnability.duckdb nohup nice -n 5 {PY} bench/learnability.py "
                        f"--n {r['examples_wanted']} --threads {threads} > data/cache/learnability.log 2>&1 &"])


SECTIONS = [Section("Learnability: unlearnable examples and gradient similarity", ("learnability.json",),
                    learnability)]
