"""The context rule in decoding (tiny-llama, 256 positions): one decode refuses a prompt over the context with the
rule's message; `decode compare` (a batch) skips the problem that does not fit, lists it in the JSON and says so on
stderr (tests/decoding/test_errors.py: the batch verb itself; tests/app: the page's line)."""
import json

import pytest

from backend.__main__ import main
from backend.decoding import DecodeConfig, run_one
from backend.errors import UserError
from backend.models import load


def test_one_decode_over_the_context_is_refused_with_the_rules_message(fresh_store):
    with pytest.raises(UserError, match=r"^The prompt has \d+ tokens; with 64 new tokens that is over the model's "
                                        r"context of 256 tokens\. Shorten the prompt or ask for fewer new tokens\.$"):
        run_one(load("tiny-llama"), "How many apples? " * 12, DecodeConfig(strategy="greedy", max_new_tokens=64))


def test_compare_skips_counts_and_says_which_problem_did_not_fit(tmp_path, capsys, fresh_store):
    upload = tmp_path / "p.jsonl"
    upload.write_text('{"question": "2 + 3?", "answer": 5}\n'
                      '{"question": "' + "How many apples are there? " * 12 + '", "answer": 3}\n')
    assert main(["decode", "compare", "--model", "tiny-llama", "--strategies", "greedy", "--jsonl", str(upload),
                 "--max-new-tokens", "4", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["skipped"] == ["Line 2"] and [r["problem_id"] for r in out["rows"]] == ["upload-1"]
    assert "1 problem skipped: the prompt leaves no room for the new tokens in the model's context (Line 2)." \
        in captured.err
