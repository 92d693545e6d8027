"""MH power sampling: the acceptance ratio against a brute-force computation, and a full run."""
import math

import pytest
import torch

from backend.decoding import DecodeConfig, run_one
from backend.decoding.context import DecodeContext
from backend.decoding.algorithms.mh import at_budget, expected_tokens, log_ratio
from backend.models import load
from tests.decoding.helpers import prompt_ids, sequence_log_prob


def test_acceptance_ratio_equals_brute_force():
    """log r from the per-token log-probs the sampler records equals
    alpha log p(x') - alpha log p(x) + log Q(x | x') - log Q(x' | x), computed from full forwards,
    with Q(x' | x) = (1 / L) q(x'[idx:] | x[:idx])."""
    handle, alpha, idx = load("tiny-llama"), 4.0, 3
    prompt = prompt_ids(handle)
    ctx = DecodeContext(handle, prompt, (), torch.Generator().manual_seed(0))
    x = ctx.rollout(1, 1 / alpha, 8)
    x_toks = x.row(0)
    suffix = ctx.rollout(1, 1 / alpha, 6, context_ids=torch.cat([prompt, torch.tensor([x_toks[:idx]])], 1))
    y_toks = x_toks[:idx] + suffix.row(0)  # length 9: differs from x's, so the index term matters
    assert len(y_toks) != len(x_toks)
    cur_p, cur_q = x.log_p[0].tolist(), x.log_q[0].tolist()
    new_p = cur_p[:idx] + suffix.log_p[0].tolist()
    new_q = cur_q[:idx] + suffix.log_q[0].tolist()
    fast = log_ratio(alpha, cur_p, cur_q, new_p, new_q, idx)

    prefix = torch.cat([prompt, torch.tensor([x_toks[:idx]])], 1)
    log_q_fwd = -math.log(len(x_toks)) + sequence_log_prob(handle, prefix, y_toks[idx:], 1 / alpha)
    log_q_rev = -math.log(len(y_toks)) + sequence_log_prob(handle, prefix, x_toks[idx:], 1 / alpha)
    brute = (alpha * (sequence_log_prob(handle, prompt, y_toks) - sequence_log_prob(handle, prompt, x_toks))
             + log_q_rev - log_q_fwd)
    assert fast == pytest.approx(brute, abs=1e-3)


def test_mh_run_records_every_step():
    handle = load("tiny-llama")
    config = DecodeConfig(strategy="mh", max_new_tokens=8, block_size=4, mh_steps=3, alpha=4.0)
    r = run_one(handle, "Count: 1 2 3", config).value
    assert r.mh is not None and r.mh.accepted.shape == (6,)  # 2 blocks x 3 steps (byte model: no early stop)
    assert 0.0 <= r.acceptance_rate <= 1.0
    assert (r.mh.position < 8).all() and r.tokens_generated == 8 + int(r.mh.proposal_tokens.sum())
    assert len(r.token_ids) == 8


def test_budget_sets_the_number_of_mh_steps():
    base = DecodeConfig(strategy="mh", max_new_tokens=64, block_size=16)
    for budget in (2, 4, 8):
        cfg = at_budget(base, budget)
        assert expected_tokens(cfg) == pytest.approx(budget * 64, rel=0.25)
