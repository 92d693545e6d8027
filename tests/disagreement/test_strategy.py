"""Guided intervention registered as a strategy of the decoding feature; its options are one Config."""
import re

import pytest

from backend.decoding import STRATEGIES, DecodeConfig, run_one
from backend.disagreement.calibration import GateConfig
from backend.errors import UserError
from backend.models import load
from backend.params import default_of
from backend.tasks.arithmetic import generate_problems

OPTIONS = {"reasoning_model": "tiny-qwen2", "calibration_problems": 4}


def test_guided_is_listed_and_decodes():
    assert STRATEGIES.get("guided").label == "Guided intervention"
    problem = generate_problems(1, "heldout", seed=0, difficulty=1)[0]
    handle = load("tiny-llama")
    result = run_one(handle, problem, DecodeConfig(strategy="guided", max_new_tokens=8, extra=OPTIONS)).value
    assert result.strategy == "guided" and 1 <= len(result.token_ids) <= 8
    assert "tokens written by" in result.notes[0]
    assert result.config.extra == {**STRATEGIES.get("guided").extra_defaults, **OPTIONS}  # all in the cache key


def test_options_default_to_the_gate_config_and_keep_their_cache_order():
    spec = STRATEGIES.get("guided")
    assert list(spec.extra_defaults) == ["reasoning_model", "budget", "signal", "window", "calibration_problems"]
    assert spec.extra_defaults["signal"] == default_of(GateConfig, "signal")
    assert spec.extra_defaults["window"] == default_of(GateConfig, "window")
    assert spec.extra_defaults["budget"] == 0.10 and spec.extra_defaults["calibration_problems"] == 32


@pytest.mark.parametrize("extra, message", [
    ({"budget": 3}, "budget must be in [0, 1], got 3"),
    ({"signal": "x"}, "signal must be one of"),
    ({"window": -1}, "window must be in [0, inf)"),
    ({"calibration_problems": 0}, "calibration_problems must be in [1, inf)"),
    ({"gate": 1}, "Unknown option(s) for guided: gate"),
])
def test_bad_options_are_user_errors(extra, message):
    with pytest.raises(UserError, match=re.escape(message)):
        DecodeConfig(strategy="guided", max_new_tokens=4, extra={**OPTIONS, **extra})
