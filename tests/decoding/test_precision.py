"""`--precision int8|bf16`: every strategy decodes on the model's reduced-precision copy, cached apart."""
import json

import pytest

from backend.__main__ import main
from backend.decoding.config import DecodeConfig
from backend.decoding.run import RunKey
from backend.store.codec import canonical_params


def test_the_reference_key_is_the_key_stored_before_the_field_existed():
    key = RunKey(config=DecodeConfig(strategy="greedy"), prompt="p", expected=None, problem_id="", chat=True)
    assert '"precision"' not in canonical_params(key)  # results stored (and shipped) before it keep their keys
    int8 = RunKey(config=DecodeConfig(strategy="greedy", precision="int8"), prompt="p", expected=None,
                  problem_id="", chat=True)
    assert '"precision":"int8"' in canonical_params(int8)


@pytest.mark.parametrize("strategy", ["greedy", "asmc"])
def test_a_run_on_the_int8_copy(strategy, capsys):
    from backend.models import load
    from backend.models.reduced import _copies

    base = ["decode", "run", "--model", "tiny-llama", "--strategy", strategy, "--prompt", "Once upon a time",
            "--max-new-tokens", "6", "--n", "3", "--json"]
    assert main(base) == 0
    reference = json.loads(capsys.readouterr().out)
    assert main([*base, "--precision", "int8"]) == 0
    rounded = json.loads(capsys.readouterr().out)
    assert ("int8", False) in _copies[load("tiny-llama").model]
    assert rounded["forward_passes"] >= 1 and reference["strategy"] == rounded["strategy"] == strategy
