"""Bad input gives a UserError with a clear message, never a traceback."""
import pytest

from backend.decoding import DecodeConfig, decode, run_batch, settings_for
from backend.errors import UserError
from backend.models import load
from backend.tasks.arithmetic import load_jsonl_problems


@pytest.mark.parametrize("config, message", [
    (DecodeConfig(strategy="greedy", max_new_tokens=0), "max_new_tokens must be between 1"),
    (DecodeConfig(strategy="greedy", max_new_tokens=10**6), "max_new_tokens must be between 1"),
    (DecodeConfig(strategy="asmc", alpha=0.0), "alpha must be in"),
    (DecodeConfig(strategy="mh", alpha=-1.0), "alpha must be in"),
    (DecodeConfig(strategy="low_temp", alpha=100.0), "alpha must be in"),
    (DecodeConfig(strategy="asmc", n=1), "n must be between 2"),
    (DecodeConfig(strategy="best_of_n", n=1), "n must be between 2"),
    (DecodeConfig(strategy="asmc", n=100_000), "n must be between 2"),
    (DecodeConfig(strategy="asmc", n=128, max_new_tokens=1000), "over the per-run budget"),
    (DecodeConfig(strategy="asmc", adaptive=True, n=8, max_particles=4), "max_particles must be between"),
    (DecodeConfig(strategy="asmc", adaptive=True, n=4, max_new_tokens=10, token_budget=10),
     "token_budget must be 0"),
    (DecodeConfig(strategy="asmc", ess_threshold=1.5), "ess_threshold"),
    (DecodeConfig(strategy="asmc", resampler="stratified-ish"), "resampler must be one of"),
    (DecodeConfig(strategy="mh", max_new_tokens=1000, block_size=1, mh_steps=100), "per-run budget"),
    (DecodeConfig(strategy="mh", block_size=0), "block_size must be between"),
    (DecodeConfig(strategy="sampling", temperature=0.0), "use the greedy strategy"),
    (DecodeConfig(strategy="best_of_n", selection="random"), "selection must be one of"),
    (DecodeConfig(strategy="beam"), "Unknown decoding strategy"),
    (DecodeConfig(strategy="greedy", extra={"gate": 1}), "Unknown option"),
])
def test_bad_parameters(config, message):
    with pytest.raises(UserError, match=message):
        decode(load("tiny-llama"), "hello", config)


def test_prompt_longer_than_the_context():
    with pytest.raises(UserError, match="context"):  # tiny models have 256 positions, one token per byte
        decode(load("tiny-llama"), "x" * 400, DecodeConfig(strategy="greedy", max_new_tokens=4))
    with pytest.raises(UserError, match="over the model's context"):
        decode(load("tiny-llama"), "x" * 200, DecodeConfig(strategy="greedy", max_new_tokens=100))


def test_empty_prompt_and_empty_batch():
    with pytest.raises(UserError, match="empty"):
        decode(load("tiny-llama"), "  ", DecodeConfig(strategy="greedy"))
    with pytest.raises(UserError, match="No problems"):
        run_batch(load("tiny-llama"), [], settings_for([DecodeConfig(strategy="greedy")]))


def test_bad_upload():
    with pytest.raises(UserError, match="answer"):
        load_jsonl_problems('{"question": "1+1?"}')
