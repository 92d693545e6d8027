"""Speculative sampling (backend/models/speculative_sampling.py): the text has plain sampling's distribution.

The statistical tests draw many rows from a tiny model, speculatively (a deliberately different draft, so that
a wrong acceptance rule shows) and plainly, and compare the token frequencies at every position with a χ²
contingency test (Bonferroni over positions). Seeds are fixed, so each test's verdict is fixed too; the test
of the test breaks the acceptance rule (always keep the draft's guess / never keep it) and must see it.
"""
import copy

import pytest
import torch
from scipy.stats import chi2_contingency

from backend.models import kernel
from backend.models import speculative_sampling as spec
from backend.models import load
from tests.decoding.helpers import sequence_log_prob

ROWS, TOKENS, ALPHA = 1500, 6, 1e-3
WARP = spec.Warp(temperature=0.6, top_k=12)


@pytest.fixture(scope="module")
def handle():
    return load("tiny-llama")


@pytest.fixture(scope="module")
def other_draft(handle):
    """The tiny model with its head sharpened and shuffled a little: q far from p."""
    draft = copy.deepcopy(handle.model)
    head = draft.get_output_embeddings()
    weight = head.weight.detach().clone() * 1.5
    weight += 0.02 * torch.randn(weight.shape, generator=torch.Generator().manual_seed(0))
    head.weight = torch.nn.Parameter(weight)
    return draft.eval()


def _prompt(handle):
    return handle.tokenizer("Once upon a time", return_tensors="pt")["input_ids"]


def _speculative(handle, draft, seed=0, rows=ROWS, tokens=TOKENS, lookahead=2, stops=()):
    decoder = kernel.start(handle.model, _prompt(handle), rows, tokens)
    return spec.sample_in_chunks(decoder, tokens, torch.Generator().manual_seed(seed), WARP, stops, draft=draft,
                                 lookahead=lookahead)


@pytest.fixture(scope="module")
def plain(handle):
    """ROWS rows sampled plainly from the same warp, with the kernel's own sampler (`draw`, not the module's)."""
    decoder = kernel.start(handle.model, _prompt(handle), ROWS, TOKENS)
    generator = torch.Generator().manual_seed(1)
    policy = lambda t, scores: kernel.draw(torch.log(WARP.probs(scores)), generator)  # noqa: E731
    return kernel.decode(decoder, policy, TOKENS, stop_at_eos=False).tokens


def _smallest_p_value(a: torch.Tensor, b: torch.Tensor) -> float:
    """Per position: a 2 x tokens contingency table (tokens seen fewer than 10 times in all pooled in one cell),
    its χ² p-value; the smallest over positions, times the number of positions (Bonferroni)."""
    smallest = 1.0
    for t in range(a.shape[1]):
        counts = torch.stack([torch.bincount(x[:, t], minlength=512) for x in (a, b)])
        common = counts.sum(0) >= 10
        table = torch.cat([counts[:, common], counts[:, ~common].sum(1, keepdim=True)], dim=1)
        table = table[:, table.sum(0) > 0]
        smallest = min(smallest, float(chi2_contingency(table.numpy())[1]))
    return min(1.0, smallest * a.shape[1])


def test_speculative_sampling_has_the_distribution_of_plain_sampling(handle, other_draft, plain):
    fast = _speculative(handle, other_draft)
    assert fast.decoded.tokens.shape == (ROWS, TOKENS)
    assert 0.2 < fast.acceptance_rate < 0.8  # the draft differs: both branches (keep, reject) are exercised
    assert _smallest_p_value(fast.decoded.tokens, plain) > ALPHA


@pytest.mark.parametrize("rule", ["always keep", "never keep"])
def test_a_wrong_acceptance_rule_is_seen(handle, other_draft, plain, monkeypatch, rule):
    keep = rule == "always keep"
    monkeypatch.setattr(spec, "_accepted", lambda ratio, uniform: torch.full_like(ratio, keep, dtype=torch.bool))
    fast = _speculative(handle, other_draft)
    assert _smallest_p_value(fast.decoded.tokens, plain) < ALPHA


def test_rows_with_holes_compute_what_they_would_alone(handle, other_draft):
    """Rejected guesses leave holes in the cache; every written token's recorded log p (temperature 1) is the
    brute-force one of its row, so the holes shift neither positions nor attention."""
    out = _speculative(handle, other_draft, rows=6, tokens=16, lookahead=3)
    assert out.accepted < out.proposed  # there were holes
    for i in range(6):
        row = out.decoded.row(i)
        assert len(row) == 16
        assert float(out.decoded.log_p[i].sum()) == pytest.approx(
            sequence_log_prob(handle, _prompt(handle), row), abs=1e-3)


def test_a_row_ends_at_its_stop_id_and_the_others_go_on(handle, other_draft):
    plain = _speculative(handle, other_draft, seed=3, rows=8, tokens=12)
    stop = int(plain.decoded.tokens[0, 4])  # a token row 0 writes: with it as stop id, row 0 ends there
    out = _speculative(handle, other_draft, seed=3, rows=8, tokens=12, stops=(stop,))
    assert out.decoded.row(0)[-1] == stop and bool(out.decoded.stopped[0])
    for i in range(8):
        row = out.decoded.row(i)
        ends_on_stop = stop in row
        assert stop not in row[:-1] and bool(out.decoded.stopped[i]) == ends_on_stop
        assert ends_on_stop or len(row) == 12
        assert row == plain.decoded.row(i)[:len(row)]  # same draws up to the end: ending does not change them


def test_the_int8_draft_is_the_default_and_keeps_most_guesses(handle):
    out = _speculative(handle, None, rows=4, tokens=12)
    assert out.decoded.tokens.shape == (4, 12) and out.acceptance_rate > 0.5


def test_a_sliding_window_model_is_refused():
    gemma = load("tiny-gemma3")
    decoder = kernel.start(gemma.model, _prompt(gemma), 2, 8)
    with pytest.raises(ValueError, match="full attention"):
        spec.sample_in_chunks(decoder, 8, torch.Generator().manual_seed(0))


def test_top_p_keeps_the_smallest_head_of_mass_top_p():
    probs = spec.Warp(top_p=0.6).probs(torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]])))
    torch.testing.assert_close(probs, torch.tensor([[0.625, 0.375, 0.0, 0.0]]))
    probs = spec.Warp(top_k=1).probs(torch.tensor([[0.1, 2.0, 0.3]]))
    assert probs.tolist() == [[0.0, 1.0, 0.0]]


def test_generate_text_samples_speculatively_only_when_asked(handle):
    from backend.models.generate import generate_text

    plain = generate_text(handle, "Tom has 3 apples.", max_new_tokens=12, temperature=0.8, seed=4)
    again = generate_text(handle, "Tom has 3 apples.", max_new_tokens=12, temperature=0.8, seed=4)
    fast = generate_text(handle, "Tom has 3 apples.", max_new_tokens=12, temperature=0.8, seed=4, speculative=True)
    assert plain == again  # the default keeps its seeded tokens
    assert fast.token_ids != plain.token_ids and 1 <= len(fast.token_ids) <= 12
    assert fast.forward_passes < plain.forward_passes
