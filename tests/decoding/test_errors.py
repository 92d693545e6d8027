"""Bad input gives a UserError with a clear message, never a traceback."""
import re

import pytest

from backend.decoding import DecodeConfig, run_one, run_batch, settings_for
from backend.errors import UserError
from backend.models import load
from backend.tasks.arithmetic import load_jsonl_problems


@pytest.mark.parametrize("fields, message", [
    (dict(strategy="greedy", max_new_tokens=0), "max_new_tokens must be in [1, 1024], got 0"),
    (dict(strategy="greedy", max_new_tokens=10**6), "max_new_tokens must be in [1, 1024]"),
    (dict(strategy="asmc", alpha=0.0), "alpha must be in"),
    (dict(strategy="mh", alpha=-1.0), "alpha must be in"),
    (dict(strategy="low_temp", alpha=100.0), "alpha must be in"),
    (dict(strategy="asmc", n=1), "n must be in [2, 128], got 1. With one sample or particle use the sampling"),
    (dict(strategy="best_of_n", n=1), "n must be in [2, 128]"),
    (dict(strategy="asmc", n=100_000), "n must be in [2, 128]"),
    (dict(strategy="asmc", n=128, max_new_tokens=1000), "over the per-run budget"),
    (dict(strategy="asmc", adaptive=True, n=8, max_particles=4), "max_particles must be between"),
    (dict(strategy="asmc", adaptive=True, n=4, max_new_tokens=10, token_budget=10), "token_budget must be 0"),
    (dict(strategy="asmc", ess_threshold=1.5), "ess_threshold"),
    (dict(strategy="asmc", resampler="stratified-ish"), "resampler must be one of"),
    (dict(strategy="mh", max_new_tokens=1000, block_size=1, mh_steps=100), "per-run budget"),
    (dict(strategy="mh", block_size=0), "block_size must be in"),
    (dict(strategy="mh", block_size=20, max_new_tokens=10), "block_size must be between 1 and max_new_tokens"),
    (dict(strategy="sampling", temperature=0.0), "use the greedy strategy"),
    (dict(strategy="best_of_n", selection="random"), "selection must be one of"),
    (dict(strategy="beam"), "Unknown decoding strategy 'beam'; choose one of greedy"),
    (dict(strategy="greedy", extra={"gate": 1}), "Unknown option"),
])
def test_bad_parameters_are_refused_when_the_config_is_built(fields, message):
    with pytest.raises(UserError, match=re.escape(message)):
        DecodeConfig(**fields)


@pytest.mark.parametrize("fields", [
    dict(strategy="greedy", alpha=0.0, n=1, temperature=-1.0),  # fields greedy does not read are not checked
    dict(strategy="asmc", max_particles=1, token_budget=-5),  # adaptive-only fields of a fixed population
])
def test_fields_a_strategy_does_not_read_are_not_checked(fields):
    assert DecodeConfig(**fields).strategy == fields["strategy"]


def test_prompt_longer_than_the_context():
    with pytest.raises(UserError, match="context"):  # tiny models have 256 positions, one token per byte
        run_one(load("tiny-llama"), "x" * 400, DecodeConfig(strategy="greedy", max_new_tokens=4))
    with pytest.raises(UserError, match="over the model's context"):
        run_one(load("tiny-llama"), "x" * 200, DecodeConfig(strategy="greedy", max_new_tokens=100))


def test_empty_prompt_and_empty_batch():
    with pytest.raises(UserError, match="empty"):
        run_one(load("tiny-llama"), "  ", DecodeConfig(strategy="greedy"))
    with pytest.raises(UserError, match="No problems"):
        run_batch(load("tiny-llama"), [], settings_for([DecodeConfig(strategy="greedy")]))


def test_bad_upload():
    with pytest.raises(UserError, match="answer"):
        load_jsonl_problems('{"question": "1+1?"}')


def test_a_repeated_question_names_both_lines():
    text = '{"question": "Two plus two?", "answer": 4}\n\n{"question": " Two plus two? ", "answer": 4}\n'
    with pytest.raises(UserError, match="Line 3: the same question as line 1"):
        load_jsonl_problems(text)


def test_a_prompt_over_the_context_is_skipped_counted_and_named_by_its_line(fresh_store):
    """The context rule for batches: the problem that does not fit is skipped (for every setting) and named; the
    others run; a batch where nothing fits is refused before any decode."""
    from backend.models import skipped_line
    from backend.store import list_runs

    handle = load("tiny-llama")
    long_line = '{"question": "' + "How many apples are there? " * 400 + '", "answer": 3}\n'
    text = '{"question": "Two plus two?", "answer": 4}\n' + long_line
    settings = settings_for([DecodeConfig(strategy="greedy", max_new_tokens=4),
                             DecodeConfig(strategy="sampling", max_new_tokens=4)])
    batch = run_batch(handle, load_jsonl_problems(text), settings).value
    assert batch.skipped == ("Line 2",)
    assert [r.problem_id for r in batch.rows] == ["upload-1", "upload-1"]  # both settings, the fitting problem only
    assert skipped_line(batch.skipped).startswith("1 problem skipped: ") and "(Line 2)" in skipped_line(batch.skipped)
    runs = len(list_runs())
    with pytest.raises(UserError, match=r"^No problem fits the model's context of 256 tokens with 4 new tokens"):
        run_batch(handle, load_jsonl_problems(long_line), settings)
    assert len(list_runs()) == runs  # refused before any decode