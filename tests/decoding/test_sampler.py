"""The strategies' rollout (backend/decoding/sampler.py): greedy is served by the kernel's checked chunks where
they apply, with the same tokens and log-probabilities as the step-by-step loop."""
import pytest
import torch

from backend.decoding.sampler import rollout
from backend.models import speculative
from tests.decoding.helpers import prompt_ids, sequence_log_prob


def _greedy(handle, chunked: bool, monkeypatch):
    monkeypatch.setattr(speculative, "MIN_NEW_TOKENS", 1 if chunked else 10_000)
    return rollout(handle.model, prompt_ids(handle), 1, 1.0, 20, (), None)


def test_greedy_rollout_in_checked_chunks_equals_the_step_by_step_one(tiny_handle, monkeypatch):
    ids = prompt_ids(tiny_handle)
    step = _greedy(tiny_handle, False, monkeypatch)
    calls = []
    original = speculative.greedy_in_chunks
    monkeypatch.setattr(speculative, "greedy_in_chunks", lambda *a, **k: calls.append(1) or original(*a, **k))
    chunked = _greedy(tiny_handle, True, monkeypatch)
    if tiny_handle.info.model_type == "gemma3_text":  # its 6-token window cannot hold the text: no chunks
        assert calls == []
    else:
        assert calls == [1] and chunked.forward_passes < step.forward_passes
    assert torch.equal(chunked.tokens, step.tokens)
    torch.testing.assert_close(chunked.log_p, step.log_p, atol=1e-4, rtol=0)
    assert float(step.log_p.sum()) == pytest.approx(sequence_log_prob(tiny_handle, ids, step.row(0)), abs=1e-3)
    assert not chunked.log_q.any() and not step.log_q.any()  # greedy has no proposal


def test_sampled_rows_record_log_p_and_log_q_of_the_drawn_tokens(tiny_handle):
    ids = prompt_ids(tiny_handle)
    out = rollout(tiny_handle.model, ids, 3, 0.7, 8, (), torch.Generator().manual_seed(5))
    for i in range(3):
        row = out.row(i)
        assert float(out.log_p[i].sum()) == pytest.approx(sequence_log_prob(tiny_handle, ids, row), abs=1e-3)
        assert float(out.log_q[i].sum()) == pytest.approx(sequence_log_prob(tiny_handle, ids, row, 0.7), abs=1e-3)
