"""SMC round: cache coherence after resampling, weights, and alpha=1 equivalence with ancestral sampling."""
import math

import pytest
import torch

from backend.decoding.sampler import log_probs, rollout
from backend.decoding.algorithms.smc import alpha_schedule, smc_round
from backend.models import load
from tests.decoding.helpers import full_log_probs, prompt_ids, sequence_log_prob


def _round(handle, n=5, alpha=4.0, steps=6, seed=0, **kw):
    return smc_round(handle.model, prompt_ids(handle), n, alpha, steps, (), torch.Generator().manual_seed(seed),
                     stop_at_eos=False, **kw)


def test_cache_coherent_after_resampling(tiny_handle):
    """After resampling, each particle's cached next-token logits equal a recomputation of its prefix."""
    r = _round(tiny_handle, ess_threshold=1.0, keep_decoder=True)  # resample at every step
    assert r.trace.resampled.any()
    dec = r.decoder
    prompt = prompt_ids(tiny_handle)
    # the decoder holds the prompt and every token but the last (the last one needs no forward)
    generated = torch.tensor([row[:-1] for row in r.rows])
    assert torch.equal(dec.tokens, torch.cat([prompt.expand(len(r.rows), -1), generated], dim=1))
    with torch.no_grad():
        recomputed = tiny_handle.model(input_ids=dec.tokens).logits[:, -1].float()
    torch.testing.assert_close(dec.logits, recomputed, atol=1e-5, rtol=1e-5)


def test_recompute_baseline_gives_the_same_particles():
    handle = load("tiny-llama")
    a = _round(handle, ess_threshold=1.0)
    b = _round(handle, ess_threshold=1.0, cache="recompute")
    assert a.rows == b.rows
    assert b.forward_passes > a.forward_passes


def test_increment_is_log_normaliser_of_the_power():
    """With q = p^alpha / Z, alpha log p - log q = log Z: no resampling -> log w = sum_t log sum_v p_t(v)^alpha."""
    handle, alpha = load("tiny-llama"), 3.0
    r = _round(handle, n=3, alpha=alpha, steps=5, ess_threshold=0.0)
    assert not r.trace.resampled.any()
    prompt = prompt_ids(handle)
    for i, row in enumerate(r.rows):
        lp = full_log_probs(handle, torch.cat([prompt, torch.tensor([row[:-1]])], dim=1))[0, prompt.shape[1] - 1:]
        expected = float(torch.logsumexp(alpha * lp, dim=-1).sum())
        assert float(r.log_w[i]) == pytest.approx(expected, abs=1e-3)


def test_alpha_ramp_weights_telescope():
    """With a ramp, total log w = alpha_final * log p(x) - sum_t log q_t(x_t) (brute force, no resampling)."""
    handle, alpha, ramp = load("tiny-llama"), 4.0, 3
    r = _round(handle, n=2, alpha=alpha, steps=5, ess_threshold=0.0, alpha_ramp=ramp)
    assert list(r.trace.alpha) == [alpha_schedule(alpha, ramp, t) for t in range(5)]
    prompt = prompt_ids(handle)
    for i, row in enumerate(r.rows):
        log_p = sequence_log_prob(handle, prompt, row)
        prefix = [torch.cat([prompt, torch.tensor([row[:t]], dtype=torch.long)], 1) for t in range(len(row))]
        log_q = sum(sequence_log_prob(handle, prefix[t], [row[t]], 1.0 / r.trace.alpha[t]) for t in range(len(row)))
        assert float(r.log_w[i]) == pytest.approx(r.trace.alpha[-1] * log_p - log_q, abs=1e-3)


def test_alpha_one_without_resampling_is_ancestral_sampling():
    """Seeded: the same tokens as plain batched sampling; in distribution: first-token log p matches -H(p)."""
    handle = load("tiny-llama")
    prompt = prompt_ids(handle)
    smc = smc_round(handle.model, prompt, 6, 1.0, 5, (), torch.Generator().manual_seed(7), ess_threshold=0.5,
                    stop_at_eos=False)
    plain = rollout(handle.model, prompt, 6, 1.0, 5, (), torch.Generator().manual_seed(7), stop_at_eos=False)
    assert smc.rows == plain.tokens.tolist()
    assert not smc.trace.resampled.any() and torch.all(smc.log_w == 0)
    # distribution of the first token over many particles: mean log p(x_1) estimates -H(p_1)
    r = smc_round(handle.model, prompt, 128, 1.0, 1, (), torch.Generator().manual_seed(1), stop_at_eos=False)
    lp = full_log_probs(handle, prompt)[0, -1]
    first = torch.tensor([row[0] for row in r.rows])
    entropy = float(-(lp.exp() * lp).sum())
    se = float(lp.std()) / math.sqrt(128)  # generous: std of log p over the vocabulary
    assert float(lp[first].mean()) == pytest.approx(-entropy, abs=4 * se + 1e-3)


def test_trace_shapes_and_genealogy():
    handle = load("tiny-llama")
    r = _round(handle, n=4, steps=6, ess_threshold=1.0)
    t = r.trace
    assert t.ess.shape == (6,) and t.genealogy.shape == (6, 4) and t.lineages.shape == (6,)
    assert (t.ess >= 1 - 1e-9).all() and (t.ess <= 4 + 1e-9).all()
    assert t.lineages[-1] <= t.lineages[0] and t.tokens_generated == 24
    assert 0 < t.ess_min_ratio <= 1
    assert [len(set(row)) for row in t.genealogy.tolist()] == t.unique_parents.tolist()


def test_log_probs_is_the_exact_tempered_softmax():
    logits = torch.tensor([[1.0, 2.0, 3.0]])
    expected = torch.log_softmax(logits * 4, dim=-1)
    torch.testing.assert_close(log_probs(logits, 0.25), expected)
