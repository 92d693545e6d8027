"""FP8's max_tokens has its upper bound from the context rule (tiny models: 256 positions): past it, the bounds,
head and simulate verbs refuse with the rule's one-line message before any work; the CLI exits 2 without a
traceback."""
import importlib

import pytest

from backend.__main__ import main
from backend.errors import UserError
from backend.fp8.bounds import BoundsConfig, compute_bounds
from backend.fp8 import observed
from backend.models import load

MESSAGE = (r"A sample text of max_tokens has 300 tokens, which is over the model's context of 256 tokens\. "
           r"Lower max_tokens \(tokens per sample text\)\.")


def test_max_tokens_past_the_context_is_refused_before_any_work(monkeypatch, fresh_store):
    handle = load("tiny-llama")
    module = importlib.import_module("backend.fp8.bounds")  # the package exports a function of the same name
    monkeypatch.setattr(module, "weight_bounds", lambda *a, **k: pytest.fail("computed before refusing"))
    with pytest.raises(UserError, match=f"^{MESSAGE}$"):
        compute_bounds(handle, BoundsConfig(n_texts=1, max_tokens=300))
    with pytest.raises(UserError, match=MESSAGE):
        observed.layer_score_samples(handle.model, handle.tokenizer, 0, 1, 300)
    assert len(observed.encode_samples(handle.model, handle.tokenizer, 1, 256)) == 1  # the whole context is allowed


@pytest.mark.parametrize("verb", [["bounds", "--model", "tiny-llama"],
                                  ["simulate", "--model", "tiny-gpt2", "--steps", "4", "--spike-step", "2"]])
def test_the_cli_exits_2_with_the_rules_message(verb, capsys, fresh_store):
    assert main(["fp8", *verb, "--texts", "1", "--max-tokens", "300", "--json"]) == 2
    err = capsys.readouterr().err
    assert "over the model's context of 256 tokens" in err and "Traceback" not in err
