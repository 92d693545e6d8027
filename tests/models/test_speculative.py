"""Greedy decoding in checked chunks writes the step-by-step greedy tokens (backend/models/speculative.py)."""
import pytest
import torch

from backend.models import kernel, speculative
from backend.models.hooks import Hooks, OutputAdd


@pytest.fixture(autouse=True)
def short_runs_are_chunked_too(monkeypatch):
    monkeypatch.setattr(speculative, "MIN_NEW_TOKENS", 1)  # the tiny models' runs are short


def _prompt(handle):
    return handle.tokenizer("Once upon a time", return_tensors="pt")["input_ids"]


def _greedy(handle, n, stops=(), speculate=False, lookahead=speculative.LOOKAHEAD, monkeypatch=None):
    if monkeypatch is not None:
        monkeypatch.setattr(speculative, "LOOKAHEAD", lookahead)
    decoder = kernel.start(handle.model, _prompt(handle), 1, n)
    return kernel.decode(decoder, kernel.greedy_policy, n, stops, speculate=speculate)


def test_checked_chunks_write_the_greedy_tokens(tiny_handle, monkeypatch):
    plain = _greedy(tiny_handle, 24, stop_at_eos := ())
    for lookahead in (1, 3, 6):
        fast = _greedy(tiny_handle, 24, stop_at_eos, True, lookahead, monkeypatch)
        assert torch.equal(fast.tokens, plain.tokens), lookahead
        assert fast.lengths.tolist() == [24]
    eligible = speculative.eligible(kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 1), 24)
    assert eligible == (tiny_handle.info.model_type != "gemma3_text")  # the tiny Gemma's 6-token window cannot hold the text


def test_a_stop_inside_a_chunk_ends_the_row_there(tiny_handle, monkeypatch):
    plain = _greedy(tiny_handle, 24)
    stop = int(plain.tokens[0, 9])  # a token the greedy row writes: the row must end at its first occurrence
    first = plain.tokens[0].tolist().index(stop)
    want = _greedy(tiny_handle, 24, (stop,))
    fast = _greedy(tiny_handle, 24, (stop,), True, 6, monkeypatch)
    assert fast.row(0) == want.row(0) == plain.tokens[0, : first + 1].tolist()


def test_fewer_checking_forwards_when_the_draft_agrees(tiny_handle, monkeypatch):
    """With the draft made the reference itself (a perfect guesser) every chunk is kept whole."""
    if not speculative.eligible(kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 1), 24):
        pytest.skip("the tiny Gemma's 6-token sliding window cannot hold the text: no checked chunks to count")
    monkeypatch.setattr(speculative, "reduced_copy", lambda model, precision, round_head=False: model)
    monkeypatch.setattr(speculative, "repeated", lambda history, k: [])  # every guess from the draft
    monkeypatch.setattr(speculative, "DRAFT_CONFIDENCE", 0.0)  # a tiny model is rarely sure: guess the full chunk
    fast = _greedy(tiny_handle, 21, (), True, 4, monkeypatch)
    assert torch.equal(fast.tokens, _greedy(tiny_handle, 21).tokens)
    assert fast.forward_passes == 1 + 4  # prefill, then 4 checks of x + 4 guesses = 20 tokens, and the 21st


def test_hooked_model_takes_the_step_by_step_loop(tiny_handle):
    vector = torch.randn(tiny_handle.info.hidden_size)
    with Hooks(tiny_handle.model, output_adds=[OutputAdd(0, vector, position=-1, scale=3.0)]):
        decoder = kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 8)
        assert not speculative.eligible(decoder, 8)
        steered = kernel.decode(decoder, kernel.greedy_policy, 8, speculate=True)
        assert steered.forward_passes == 8  # one forward a token: the hook saw every step alone


def test_repeated_text_guesses_what_followed_its_last_tokens():
    assert speculative.repeated([5, 6, 7, 8, 9, 1, 6, 7], 3) == [8, 9, 1]  # "6 7" seen before: what came next
    assert speculative.repeated([1, 2, 3, 9, 2, 3, 4, 1, 2, 3], 2) == [9, 2]  # the longest tail first
    assert speculative.repeated([7, 1, 2, 5, 1, 2, 6, 3, 1, 2], 2) == [6, 3]  # then the latest occurrence
    assert speculative.repeated([1, 2, 3, 4], 3) == []
    assert speculative.repeated([1, 2, 1, 2], 5) == [1, 2]  # never past the end of the history


def test_a_sliding_window_that_holds_the_text_is_rolled_back_too(monkeypatch):
    from backend.models import load

    handle = load("tiny-gemma3")
    monkeypatch.setattr(handle.model.config, "sliding_window", 64)  # both loops see the same (wider) window
    decoder = kernel.start(handle.model, _prompt(handle), 1, 24)
    assert speculative.eligible(decoder, 24) and not speculative.eligible(decoder, 60)
    assert torch.equal(_greedy(handle, 24, (), True, 4, monkeypatch).tokens, _greedy(handle, 24).tokens)


def test_transformers_passive_capturing_hooks_do_not_turn_chunks_off(tiny_handle):
    """A forward that asked for attentions leaves transformers' capturing hooks on the layers for good."""
    with torch.no_grad():
        tiny_handle.model(input_ids=_prompt(tiny_handle), output_attentions=True)
    decoder = kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 8)
    if tiny_handle.info.model_type != "gemma3_text":
        assert speculative.eligible(decoder, 8)


def test_a_short_run_takes_the_step_by_step_loop(tiny_handle, monkeypatch):
    monkeypatch.setattr(speculative, "MIN_NEW_TOKENS", 32)
    decoder = kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 8)
    assert not speculative.eligible(decoder, 8)


def test_checks_count_the_guesses_kept(tiny_handle, monkeypatch):
    if not speculative.eligible(kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 1), 24):
        pytest.skip("the tiny Gemma's 6-token sliding window cannot hold the text: no checked chunks to count")
    monkeypatch.setattr(speculative, "reduced_copy", lambda model, precision, round_head=False: model)
    monkeypatch.setattr(speculative, "repeated", lambda history, k: [])
    monkeypatch.setattr(speculative, "DRAFT_CONFIDENCE", 0.0)
    decoder = kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 21)
    out, _, checks = speculative.greedy_in_chunks(decoder, 21, (), lookahead=4)
    assert len(out) == 21 and checks.forwards == 4
    assert checks.guessed == checks.kept == {"repeated": 0, "draft": 16} and checks.acceptance() == 1.0
    assert checks.acceptance("repeated") is None


def test_an_unsure_draft_stops_guessing_and_the_tokens_stay(tiny_handle, monkeypatch):
    plain = _greedy(tiny_handle, 24)
    monkeypatch.setattr(speculative, "repeated", lambda history, k: [])
    monkeypatch.setattr(speculative, "DRAFT_CONFIDENCE", 1.01)  # no guess is sure enough: one guess per check
    decoder = kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 24)
    if not speculative.eligible(decoder, 24):
        pytest.skip("the tiny Gemma's 6-token sliding window cannot hold the text")
    out, _, checks = speculative.greedy_in_chunks(decoder, 24, (), lookahead=6)
    assert out == plain.row(0)
    assert checks.guessed["draft"] == checks.forwards  # each check carried exactly one draft guess
