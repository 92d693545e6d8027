"""Greedy decoding in checked chunks writes the step-by-step greedy tokens (backend/models/speculative.py)."""
import torch

from backend.models import kernel, speculative
from backend.models.hooks import Hooks, OutputAdd


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
    eligible = speculative.eligible(kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 1))
    assert eligible == (tiny_handle.info.model_type != "gemma3_text")  # a sliding window cannot be rolled back


def test_a_stop_inside_a_chunk_ends_the_row_there(tiny_handle, monkeypatch):
    plain = _greedy(tiny_handle, 24)
    stop = int(plain.tokens[0, 9])  # a token the greedy row writes: the row must end at its first occurrence
    first = plain.tokens[0].tolist().index(stop)
    want = _greedy(tiny_handle, 24, (stop,))
    fast = _greedy(tiny_handle, 24, (stop,), True, 6, monkeypatch)
    assert fast.row(0) == want.row(0) == plain.tokens[0, : first + 1].tolist()


def test_fewer_checking_forwards_when_the_draft_agrees(tiny_handle, monkeypatch):
    """With the draft made the reference itself (a perfect guesser) every chunk is kept whole."""
    if not speculative.eligible(kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 1)):
        return
    monkeypatch.setattr(speculative, "reduced_copy", lambda model, precision, round_head=False: model)
    fast = _greedy(tiny_handle, 21, (), True, 4, monkeypatch)
    assert torch.equal(fast.tokens, _greedy(tiny_handle, 21).tokens)
    assert fast.forward_passes == 1 + 4  # prefill, then 4 checks of x + 4 guesses = 20 tokens, and the 21st


def test_hooked_model_takes_the_step_by_step_loop(tiny_handle):
    vector = torch.randn(tiny_handle.info.hidden_size)
    with Hooks(tiny_handle.model, output_adds=[OutputAdd(0, vector, position=-1, scale=3.0)]):
        decoder = kernel.start(tiny_handle.model, _prompt(tiny_handle), 1, 8)
        assert not speculative.eligible(decoder)
        steered = kernel.decode(decoder, kernel.greedy_policy, 8, speculate=True)
        assert steered.forward_passes == 8  # one forward a token: the hook saw every step alone
