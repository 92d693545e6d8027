"""Single-sequence strategies (greedy, ancestral sampling, low temperature) and best-of-n."""
from __future__ import annotations

import numpy as np

from backend.decoding.config import DecodeConfig
from backend.decoding.context import DecodeContext
from backend.decoding.registry import STRATEGIES, StrategySpec
from backend.decoding.result import Candidate, Outcome
from backend.decoding.select import choose, selection_mode


def _progress(ctx: DecodeContext, config: DecodeConfig):
    return lambda t: ctx.progress((t + 1) / config.max_new_tokens, f"token {t + 1}/{config.max_new_tokens}")


def _single(ctx: DecodeContext, config: DecodeConfig, temperature: float, greedy: bool = False) -> Outcome:
    roll = ctx.rollout(1, temperature, config.max_new_tokens, greedy=greedy, on_step=_progress(ctx, config))
    return Outcome(token_ids=tuple(roll.row(0)), tokens_generated=roll.tokens_generated,
                   forward_passes=roll.forward_passes)


def run_greedy(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    return _single(ctx, config, 1.0, greedy=True)


def run_sampling(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    return _single(ctx, config, config.temperature)


def run_low_temp(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    """Token-wise power sharpening: temperature 1/alpha (not the same as sampling from p(x)^alpha)."""
    return _single(ctx, config, 1.0 / config.alpha)


def run_best_of_n(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    """n samples batched; keep the best total log-likelihood, or the majority answer when there is a checker."""
    roll = ctx.rollout(config.n, config.temperature, config.max_new_tokens, on_step=_progress(ctx, config))
    rows = [roll.row(i) for i in range(config.n)]
    scores = roll.log_p.sum(dim=1).double().numpy()
    answers = [ctx.answer(r) for r in rows]
    mode = selection_mode(config.selection, ctx.answer_of is not None)
    best = choose(scores, answers, mode)
    weights = np.full(config.n, 1.0 / config.n)
    candidates = tuple(Candidate(text=ctx.text(r), answer=a, score=float(s), weight=float(w), tokens=len(r))
                       for r, a, s, w in zip(rows, answers, scores, weights))
    return Outcome(token_ids=tuple(rows[best]), tokens_generated=roll.tokens_generated,
                   forward_passes=roll.forward_passes, candidates=candidates,
                   notes=(f"selected sample {best} by {mode}",))


def _n_at_budget(config: DecodeConfig, budget: int) -> DecodeConfig:
    return config.replace(n=max(2, budget))


for _spec in (
    StrategySpec("greedy", "Greedy", "Argmax at every step.", run_greedy),
    StrategySpec("sampling", "Sampling", "Ancestral sampling at a temperature.", run_sampling,
                 params=("temperature",)),
    StrategySpec("low_temp", "Low temperature", "Ancestral sampling at temperature 1/alpha (token-wise power).",
                 run_low_temp, params=("alpha",)),
    StrategySpec("best_of_n", "Best-of-n", "n samples in one batch; best log-likelihood or majority answer.",
                 run_best_of_n, params=("temperature", "n", "selection"), at_budget=_n_at_budget),
):
    STRATEGIES.register(_spec)
