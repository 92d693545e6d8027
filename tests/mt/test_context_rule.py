"""The context rule in head finding (tiny-llama, 256 positions): a few-shot example whose prompt and answer do not
fit is refused with the rule's message (naming its row) before either forward; `fit_shots` asks the rule how many
demonstrations fit instead of reading the limit from the config."""
import pytest

from backend.errors import UserError
from backend.models import load
from backend.mt.examples import build_example, encode, encode_answer, fit_shots
from backend.mt.prompts import PromptPair


def test_an_example_over_the_context_is_refused_naming_its_row_before_any_forward():
    handle = load("tiny-llama")
    pair = PromptPair(row=7, clean="one two three. " * 17, corrupt="uno.", answer=" four")
    n = len(encode(handle, pair.clean))
    assert n <= 256 < n + len(encode_answer(handle, pair.answer))  # the prompt fits, the prompt and its answer do not
    calls = []
    hook = handle.model.register_forward_pre_hook(lambda *a: calls.append(1))
    try:
        with pytest.raises(UserError, match=r"^Row 7: the few-shot prompt has \d+ tokens, which is over the model's "
                                            r"context of 256 tokens\. Use fewer demonstrations or shorter "
                                            r"sentences\.$"):
            build_example(handle, pair, 16)
    finally:
        hook.remove()
    assert calls == []
    fitting = PromptPair(row=1, clean="one two three.", corrupt="uno dos tres.", answer=" four")
    assert build_example(handle, fitting, 16).row == 1  # within the context: computed


def test_fit_shots_gives_small_context_models_fewer_demonstrations(tiny_data):
    handle = load("tiny-llama")
    src = tiny_data.languages[0]
    k = fit_shots(handle, tiny_data, src, tiny_data.languages[1], wanted=50)
    assert 1 <= k < 50  # 256 positions cannot hold 50 demonstrations
