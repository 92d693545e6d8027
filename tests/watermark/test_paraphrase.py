"""The LM paraphrase attack end to end on a tiny model: the model rewrites the text (greedy, cached per
text), the attack reports its effect, and a text too long for the context is refused with the context rule's
message (never returned unchanged, never cut short)."""
import pytest

from backend.errors import UserError
from backend.watermark import paraphrase as paraphrase_module
from backend.watermark.attacks import AttackContext, apply_attack, changed_share
from backend.watermark.paraphrase import budget, paraphraser

TEXT = "The old city was quiet. People walked along the street."


def test_paraphrase_attack_runs_on_the_tiny_writer(writer_handle, monkeypatch):
    calls = []
    real = paraphrase_module.generate_text

    def counted(*args, **kwargs):
        calls.append(kwargs["max_new_tokens"])
        return real(*args, **kwargs)

    monkeypatch.setattr(paraphrase_module, "generate_text", counted)
    ctx = AttackContext(paraphrase=paraphraser(writer_handle))
    out = apply_attack("lm_paraphrase", TEXT, ctx=ctx)
    assert isinstance(out, str) and out.strip() and out != TEXT and changed_share(TEXT, out) > 0
    n_text = len(writer_handle.tokenizer(TEXT, add_special_tokens=False)["input_ids"])
    assert calls == [int(n_text * 1.5) + 16]  # the budget: half as many tokens again, plus 16
    assert len(writer_handle.tokenizer(out, add_special_tokens=False)["input_ids"]) <= calls[0]
    assert apply_attack("lm_paraphrase", TEXT, ctx=ctx) == out and len(calls) == 1  # greedy, and cached
    with pytest.raises(UserError):
        apply_attack("lm_paraphrase", TEXT)  # no model in the context


def test_a_text_longer_than_the_context_is_refused_by_the_rule_before_any_forward():
    from backend.models import load

    handle = load("tiny-llama")  # 256 positions: the model's real limit, not an assumed 4096
    calls = []
    hook = handle.model.register_forward_pre_hook(lambda *a: calls.append(1))
    try:
        with pytest.raises(UserError, match=r"^The paraphrase request has \d+ tokens; with \d+ new tokens that is over "
                                            r"the model's context of 256 tokens\. Paraphrase a shorter text\.$"):
            paraphraser(handle)("word " * 20)  # the request fits, the request and its budget do not
    finally:
        hook.remove()
    assert calls == []
    assert budget(10) == 31 and budget(1000) == 400
