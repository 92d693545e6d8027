"""Adaptive SMC (ASMC): SMC rounds on p(x)^alpha whose particle population adapts to the problem.

Adaptivity rule (adaptive=True; otherwise one round of n particles):
  * Round 1 runs N_1 = n particles. Rounds are independent SMC runs; their final particles are
    pooled with their final log-weights as they are. Resampling resets weights to their mean, so a
    round's weights carry its evidence estimate and pooling weights each round by its evidence.
  * After each round, stop early when the problem looks easy: the pool agrees (the most common
    extracted answer holds >= AGREE = 75% of the normalised pooled weight) and the round did not
    collapse (ESS_min / N >= COLLAPSE = 0.1). Without a checker only the collapse test applies.
  * Otherwise run another round with twice the particles, N_{r+1} = min(2 N_r, max_particles),
    shrunk to what the remaining token budget allows (budget - tokens spent) // max_new_tokens;
    stop when fewer than 2 particles fit.
So easy problems cost one small round, and hard ones (collapse or disagreement) get up to the
budget, spent on ever larger populations.
"""
from __future__ import annotations

import torch

from backend.decoding.config import DecodeConfig
from backend.decoding.context import DecodeContext
from backend.decoding.registry import STRATEGIES, StrategySpec
from backend.decoding.resampling import normalise
from backend.decoding.result import Candidate, Outcome
from backend.decoding.select import agreement, choose, selection_mode
from backend.decoding.algorithms.smc import Round, smc_round

AGREE = 0.75
COLLAPSE = 0.1


def _round(ctx: DecodeContext, config: DecodeConfig, n: int, start: float, end: float) -> Round:
    def on_step(t: int) -> None:
        ctx.progress(start + (end - start) * (t + 1) / config.max_new_tokens,
                     f"{n} particles: token {t + 1}/{config.max_new_tokens}")

    return smc_round(ctx.model, ctx.prompt_ids, n, config.alpha, config.max_new_tokens, ctx.stops, ctx.generator,
                     ess_threshold=config.ess_threshold, resampler=config.resampler, alpha_ramp=config.alpha_ramp,
                     cache=config.resample_cache, on_step=on_step, precision=ctx.precision)


def run_asmc(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    budget = config.budget if config.adaptive else config.n * config.max_new_tokens
    rounds: list[Round] = []
    notes: list[str] = []
    spent, n = 0, config.n
    rows: list[list[int]] = []
    answers: list[int | None] = []
    log_w = torch.zeros(0, dtype=torch.float64)
    while True:
        r = _round(ctx, config, n, spent / budget, min(1.0, (spent + n * config.max_new_tokens) / budget))
        rounds.append(r)
        spent += r.trace.tokens_generated
        rows += r.rows
        answers += [ctx.answer(row) for row in r.rows]
        log_w = torch.cat([log_w, r.log_w])
        agree = agreement(answers, normalise(log_w).numpy()) if ctx.answer_of is not None else None
        collapse = r.trace.ess_min_ratio
        said = f"round {len(rounds)}: N={n}, ESS_min/N={collapse:.2f}" + (
            f", agreement {agree:.2f}" if agree is not None else "")
        if not config.adaptive:
            notes.append(said)
            break
        if collapse >= COLLAPSE and (agree is None or agree >= AGREE):
            notes.append(said + " -> stop (easy)")
            break
        n_next = min(2 * n, config.max_particles, (budget - spent) // config.max_new_tokens)
        if n_next < 2:
            notes.append(said + " -> stop (budget spent)")
            break
        notes.append(said + f" -> grow to N={n_next}")
        n = n_next
    weights = normalise(log_w).numpy()
    scores = log_w.numpy()
    mode = selection_mode(config.selection, ctx.answer_of is not None)
    best = choose(scores, answers, mode, weights)
    candidates = tuple(Candidate(text=ctx.text(row), answer=a, score=float(s), weight=float(w), tokens=len(row))
                       for row, a, s, w in zip(rows, answers, scores, weights))
    notes.append(f"selected particle {best} by {mode}")
    return Outcome(token_ids=tuple(rows[best]), tokens_generated=spent,
                   forward_passes=sum(r.forward_passes for r in rounds), candidates=candidates,
                   particles=tuple(r.trace for r in rounds), notes=tuple(notes))


def at_budget(config: DecodeConfig, budget: int) -> DecodeConfig:
    if config.adaptive:
        return config.replace(token_budget=max(budget, config.n) * config.max_new_tokens,
                              max_particles=max(config.max_particles, config.n))
    return config.replace(n=max(2, budget))


STRATEGIES.register(StrategySpec(
    "asmc", "ASMC",
    "N particles on p^alpha in one batch; ESS-triggered systematic resampling by reordering KV-cache rows; "
    "optionally adaptive population.",
    run_asmc, params=("alpha", "n", "selection", "ess_threshold", "resampler", "alpha_ramp", "adaptive",
                      "token_budget", "max_particles", "resample_cache"), at_budget=at_budget))
