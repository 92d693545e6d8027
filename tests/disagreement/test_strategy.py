"""Guided intervention registered as a strategy of the decoding feature."""
import pytest

from backend.decoding import DecodeConfig, decode, strategies
from backend.errors import UserError
from backend.models import load
from backend.tasks.arithmetic import generate_problems

OPTIONS = {"reasoning_model": "tiny-qwen2", "calibration_problems": 4}


def test_guided_is_listed_and_decodes():
    assert strategies()["guided"].label == "Guided intervention"
    problem = generate_problems(1, "heldout", seed=0, difficulty=1)[0]
    handle = load("tiny-llama")
    result = decode(handle, problem, DecodeConfig(strategy="guided", max_new_tokens=8, extra=OPTIONS)).value
    assert result.strategy == "guided" and 1 <= len(result.token_ids) <= 8
    assert "tokens written by" in result.notes[0]


def test_bad_options_are_user_errors():
    handle = load("tiny-llama")
    with pytest.raises(UserError, match="budget"):
        decode(handle, "Hi", DecodeConfig(strategy="guided", max_new_tokens=4, extra={**OPTIONS, "budget": 3}))
    with pytest.raises(UserError, match="signal"):
        decode(handle, "Hi", DecodeConfig(strategy="guided", max_new_tokens=4, extra={**OPTIONS, "signal": "x"}))
