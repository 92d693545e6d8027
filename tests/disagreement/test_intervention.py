"""Intervention decoding on tiny models: the references are bit-identical to plain greedy decoding,
the cheap variant catches the reasoning cache up in chunks, and mismatched tokenizers are refused."""
import numpy as np
import pytest
import torch

from backend.disagreement.gate import Threshold, calibrate
from backend.disagreement.intervention import FixedPositions, SignalGate, take_over
from backend.disagreement.pair import check_pair, load_pair, reasoning_candidates
from backend.disagreement.rollout import prompt_ids, typed_problem
from backend.errors import UserError
from backend.models import load
from backend.models.generate import generate_text
from backend.tasks.arithmetic import format_prompt
from tests.support.tiny import allow_model, byte_tokenizer, save_for_tokenizer, tiny_config

PROBLEM = typed_problem("Ava has 3 apples and gets 4 more. How many now?", 7)
N = 24


@pytest.fixture(scope="module")
def pair():
    return load_pair("tiny-llama", "tiny-qwen2")


def _reference(handle):
    return list(generate_text(handle, format_prompt(PROBLEM), max_new_tokens=N).token_ids)


def test_budget_zero_is_base_greedy_decoding(pair):
    prompt = prompt_ids(pair.base, PROBLEM)
    never = calibrate(np.array([1.0, 2.0, 3.0]), 0.0)
    out = take_over(pair, prompt, SignalGate("ce", never), N)
    assert list(out.token_ids) == _reference(pair.base)
    assert out.n_interventions == 0
    assert np.isfinite(out.signal).all()  # the guided gate scored every step
    assert take_over(pair, prompt, FixedPositions(frozenset()), N).reasoning_passes == 0  # base alone: never queried


def test_gate_always_on_is_reasoning_greedy_decoding(pair):
    prompt = prompt_ids(pair.base, PROBLEM)
    expected = _reference(pair.reasoning)
    assert expected != _reference(pair.base)  # otherwise the test would prove nothing
    for policy in (SignalGate("ce", Threshold.always()), SignalGate("entropy_base", Threshold.always()),
                   FixedPositions(frozenset(), every=True)):
        out = take_over(pair, prompt, policy, N)
        assert list(out.token_ids) == expected
        assert out.intervened.all()


def test_lazy_follower_catches_up_in_one_chunk(pair):
    prompt = prompt_ids(pair.base, PROBLEM)
    out = take_over(pair, prompt, FixedPositions(frozenset({5, 9})), 12)
    assert out.intervened.nonzero()[0].tolist() == [5, 9]
    assert out.reasoning_passes == 2  # one prefill of prompt + 5 tokens, one extend of 4 tokens
    # a takeover writes the reasoning model's greedy token for that exact prefix
    logits = pair.reasoning.model(input_ids=torch.cat([prompt, torch.tensor([out.token_ids[:5]])], 1)).logits
    assert out.token_ids[5] == int(logits[0, -1].argmax())


def test_fixed_length_runs_ignore_eos(pair):
    out = take_over(pair, prompt_ids(pair.base, PROBLEM), FixedPositions(frozenset()), 10, fixed_length=True)
    assert len(out.token_ids) == 10


def test_mismatched_tokenizers_are_refused(tmp_path, monkeypatch):
    tok = byte_tokenizer()
    tok.add_tokens(["<extra>"])
    allow_model(monkeypatch, "tiny-other-vocab", save_for_tokenizer(tmp_path, tok))
    with pytest.raises(UserError, match="do not share a tokenizer"):
        load_pair("tiny-llama", "tiny-other-vocab")
    assert "tiny-other-vocab" not in reasoning_candidates("tiny-llama")
    assert "tiny-qwen2" in reasoning_candidates("tiny-llama")


def test_a_pair_of_one_model_compares_with_itself():
    handle = load("tiny-llama")
    assert check_pair(handle, handle).ref.id == "tiny-llama + tiny-llama"


def test_over_long_and_empty_prompts_are_user_errors(pair):
    with pytest.raises(UserError, match="empty"):
        typed_problem("   ")
    long = typed_problem("How many? " * 60, 1)
    with pytest.raises(UserError, match="context"):
        take_over(pair, prompt_ids(pair.base, long), FixedPositions(frozenset()), N)


def test_batched_rows_equal_one_by_one_decoding(pair):
    from backend.disagreement.batched import take_over_rows

    prompt = prompt_ids(pair.base, PROBLEM)
    make = lambda: [FixedPositions(frozenset()), FixedPositions(frozenset(), every=True),  # noqa: E731
                    SignalGate("ce", Threshold(0.1, 5.5695, 1.0001)), FixedPositions(frozenset({3, 7}))]
    rows = take_over_rows(pair, prompt, make(), 16)
    for policy, row in zip(make(), rows):
        single = take_over(pair, prompt, policy, 16)
        assert row.token_ids == single.token_ids
        assert (row.intervened == single.intervened).all()


def test_different_eos_tokens_are_accepted_and_both_stop(tmp_path, monkeypatch):
    """A base model and its chat fine-tune often end with different tokens (Qwen3-Base vs Qwen3)."""
    tok = byte_tokenizer()
    tok.eos_token = "<|endoftext|>"
    config = tiny_config("llama", len(tok))
    config.eos_token_id = tok.eos_token_id
    allow_model(monkeypatch, "tiny-other-eos", save_for_tokenizer(tmp_path, tok, config=config))
    pair = load_pair("tiny-other-eos", "tiny-qwen2")
    assert pair.stops == {tok.convert_tokens_to_ids("<|endoftext|>"), tok.convert_tokens_to_ids("<|im_end|>")}


@pytest.mark.parametrize("budget", [0.05, 0.2, 0.5])
def test_capped_gate_keeps_the_realised_rate_within_one_takeover_of_the_budget(budget):
    """A gate that fires on every step: uncapped it takes every token; capped, at most max(1, r·(t+1)) by step t."""
    fires = Threshold(budget, -1.0, 0.0)  # every signal >= 0 passes
    free, capped = SignalGate("ce", fires, window=0), SignalGate("ce", fires, window=0, capped=True)
    steps = 60
    taken_free = [free.decide(t, 1.0) for t in range(steps)]
    taken = [capped.decide(t, 1.0) for t in range(steps)]
    assert all(taken_free)
    assert taken[0], "the first takeover is always allowed"
    for t in range(steps):
        assert sum(taken[:t + 1]) <= max(1.0, budget * (t + 1))
    assert sum(taken) >= budget * steps - 1  # the cap limits, it does not starve
    assert not any(SignalGate("ce", Threshold(budget, 2.0, 0.0), window=0, capped=True).decide(t, 1.0)
                   for t in range(steps)), "the cap never adds a takeover the gate did not pass"


def _base_argmax_along(pair, prompt, tokens):
    """The base model's greedy token at every step of `tokens` (teacher-forced)."""
    ids = torch.cat([prompt, torch.tensor([list(tokens)])], 1)
    return pair.base.model(input_ids=ids).logits[0, prompt.shape[1] - 1:-1].argmax(-1).tolist()


def test_a_decisive_gate_counts_only_the_tokens_it_changes(pair):
    """Every step passes the threshold: the output is the reasoning model's, as with the plain gate, but only
    the steps where the base would have written another token count as takeovers."""
    prompt = prompt_ids(pair.base, PROBLEM)
    fires = Threshold(1.0, -1.0, 0.0)  # every signal >= 0 passes, yet not the 'always' gate
    plain = take_over(pair, prompt, SignalGate("ce", fires, window=0), N)
    decisive = take_over(pair, prompt, SignalGate("ce", fires, window=0, decisive=True), N)
    assert decisive.token_ids == plain.token_ids == tuple(_reference(pair.reasoning))
    base_picks = _base_argmax_along(pair, prompt, decisive.token_ids)
    changed = [b != y for b, y in zip(base_picks, decisive.token_ids)]
    assert decisive.intervened.tolist() == changed
    assert plain.n_interventions == len(plain.token_ids)
    same = check_pair(pair.base, pair.base)  # a model against itself never writes another token
    assert take_over(same, prompt, SignalGate("ce", fires, window=0), N).n_interventions == N
    assert take_over(same, prompt, SignalGate("ce", fires, window=0, decisive=True), N).n_interventions == 0


def test_decisive_controls_wait_for_a_step_where_the_tokens_differ():
    control = FixedPositions(frozenset({1, 2}), decisive=True)
    differs = [False, False, False, True, False, True, True]
    assert [control.decide(t, float("nan"), d) for t, d in enumerate(differs)] == [
        False, False, False, True, False, True, False]
    plain = FixedPositions(frozenset({1, 2}))
    assert [plain.decide(t, float("nan"), d) for t, d in enumerate(differs)] == [
        False, True, True, False, False, False, False]


def test_decisive_rows_equal_one_by_one_decoding(pair):
    from backend.disagreement.batched import take_over_rows

    prompt = prompt_ids(pair.base, PROBLEM)
    make = lambda: [SignalGate("ce", Threshold(0.3, 5.0, 1.0), window=0, decisive=True),  # noqa: E731
                    SignalGate("entropy_base", Threshold(0.3, 1.0, 1.0), window=0, decisive=True),
                    FixedPositions(frozenset({0, 4, 9}), decisive=True)]
    rows = take_over_rows(pair, prompt, make(), 16)
    for policy, row in zip(make(), rows):
        single = take_over(pair, prompt, policy, 16)
        assert row.token_ids == single.token_ids and row.stop_taken == single.stop_taken
        assert (row.intervened == single.intervened).all()
    assert rows[2].n_interventions == 3


def test_a_stop_written_at_a_takeover_is_flagged_not_counted(pair):
    """The reasoning model's first token made a stop: taking over ends the output there, flagged as a takeover
    of the stop; the base alone, whose pick differs, does not stop and flags nothing."""
    prompt = prompt_ids(pair.base, PROBLEM)
    first = _reference(pair.reasoning)[0]
    ended = take_over(pair, prompt, FixedPositions(frozenset(), every=True), N, stops=[first])
    assert ended.token_ids == () and ended.stop_taken and ended.n_interventions == 0
    alone = take_over(pair, prompt, FixedPositions(frozenset()), N, stops=[first])
    assert not alone.stop_taken and len(alone.token_ids) > 0
