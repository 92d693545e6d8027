"""Power sampling by autoregressive Metropolis-Hastings ("Reasoning with Sampling").

Target pi(x) ∝ p(x)^alpha over the generated tokens; proposal q = sampling at temperature 1/alpha.
The sequence grows in blocks of B tokens; after each block, K MH steps each pick a position idx
uniformly among the current L generated tokens, resample the suffix from q up to the block's end
(or a stop token), giving x' of length L', and accept with

    log r = alpha * [log p(x'_suffix) - log p(x_suffix)] + [log q(x_suffix) - log q(x'_suffix)]
            + log L - log L'

(the prefix terms cancel; log L - log L' is the index-choice correction, 0 when lengths agree).
Every proposal re-encodes its prefix in one forward pass and then decodes serially, which is why
the method is slow and has a heavy latency tail.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from backend.decoding.config import MAX_TOKEN_BUDGET, DecodeConfig
from backend.decoding.context import DecodeContext
from backend.decoding.registry import STRATEGIES, StrategySpec
from backend.decoding.result import MHTrace, Outcome
from backend.errors import UserError


def log_ratio(alpha: float, cur_p: list[float], cur_q: list[float], new_p: list[float], new_q: list[float],
              idx: int) -> float:
    """log acceptance ratio of replacing the suffix from `idx` (per-token log p / log q lists of x and x')."""
    lp_old, lq_old = sum(cur_p[idx:]), sum(cur_q[idx:])
    lp_new, lq_new = sum(new_p[idx:]), sum(new_q[idx:])
    return alpha * (lp_new - lp_old) + (lq_old - lq_new) + math.log(len(cur_p)) - math.log(len(new_p))


def expected_tokens(config: DecodeConfig) -> float:
    """Generated tokens if no sequence stops early: T + K * sum_j E[L_j - idx] with L_j the block end."""
    ends = [min(j * config.block_size, config.max_new_tokens) for j in range(1, _blocks(config) + 1)]
    return config.max_new_tokens + config.mh_steps * sum((end + 1) / 2 for end in ends)


def _blocks(config: DecodeConfig) -> int:
    return math.ceil(config.max_new_tokens / config.block_size)


def _context(ctx: DecodeContext, prefix: list[int]) -> torch.Tensor:
    return torch.cat([ctx.prompt_ids, torch.tensor([prefix], dtype=ctx.prompt_ids.dtype)], dim=1)


def run_mh(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    alpha, tau, g = config.alpha, 1.0 / config.alpha, ctx.generator
    toks: list[int] = []
    lp: list[float] = []
    lq: list[float] = []
    ended = False  # the current sequence ends on a stop token (as the kernel recorded it)
    passes = generated = 0
    trace: list[tuple[int, int, float, bool, int]] = []
    n_blocks = _blocks(config)
    for block in range(n_blocks):
        end = min((block + 1) * config.block_size, config.max_new_tokens)
        if not ended:  # grow the current sequence to the block's end
            roll = ctx.rollout(1, tau, end - len(toks), context_ids=_context(ctx, toks))
            toks, ended = toks + roll.row(0), bool(roll.stopped[0])
            passes, generated = passes + roll.forward_passes, generated + roll.tokens_generated
            lp += roll.log_p[0, : roll.lengths[0]].tolist()
            lq += roll.log_q[0, : roll.lengths[0]].tolist()
        for _ in range(config.mh_steps):
            idx = int(torch.randint(0, len(toks), (), generator=g))
            roll = ctx.rollout(1, tau, end - idx, context_ids=_context(ctx, toks[:idx]))
            passes, generated = passes + roll.forward_passes, generated + roll.tokens_generated
            n_new = int(roll.lengths[0])
            new_p = lp[:idx] + roll.log_p[0, :n_new].tolist()
            new_q = lq[:idx] + roll.log_q[0, :n_new].tolist()
            log_r = log_ratio(alpha, lp, lq, new_p, new_q, idx)
            accept = math.log(float(torch.rand((), generator=g, dtype=torch.float64)) or 1e-300) < log_r
            if accept:
                toks, lp, lq, ended = toks[:idx] + roll.row(0), new_p, new_q, bool(roll.stopped[0])
            trace.append((block, idx, log_r, accept, n_new))
        ctx.progress((block + 1) / n_blocks, f"block {block + 1}/{n_blocks}: {sum(t[3] for t in trace)} accepted")
        if ended:
            break
    cols = list(zip(*trace)) if trace else [(), (), (), (), ()]
    mh = MHTrace(block=np.array(cols[0], dtype=np.int64), position=np.array(cols[1], dtype=np.int64),
                 log_ratio=np.array(cols[2], dtype=np.float64), accepted=np.array(cols[3], dtype=bool),
                 proposal_tokens=np.array(cols[4], dtype=np.int64))
    return Outcome(token_ids=tuple(toks), tokens_generated=generated, forward_passes=passes, mh=mh,
                   notes=(f"{len(trace)} MH steps, acceptance {mh.acceptance_rate:.2f}",) if trace else ())


def _check(config: DecodeConfig) -> None:
    cost = expected_tokens(config)
    if cost > MAX_TOKEN_BUDGET:
        raise UserError(f"This MH setting would generate about {cost:,.0f} tokens, over the per-run budget of "
                        f"{MAX_TOKEN_BUDGET:,}; lower mh_steps or max_new_tokens, or raise block_size.")


def at_budget(config: DecodeConfig, budget: int) -> DecodeConfig:
    """The mh_steps K whose expected cost is closest to budget * max_new_tokens generated tokens."""
    per_step = expected_tokens(config.replace(mh_steps=1)) - config.max_new_tokens
    k = round((budget - 1) * config.max_new_tokens / per_step)
    return config.replace(mh_steps=max(0, min(100, k)))


STRATEGIES.register(StrategySpec(
    "mh", "MH power sampling",
    "Serial Metropolis-Hastings on p^alpha: blocks of B tokens, K suffix-resampling steps after each block.",
    run_mh, params=("alpha", "block_size", "mh_steps"), at_budget=at_budget, check=_check))
