"""The context rule's one API (backend/models/rules.py) on the tiny models (256 positions: llama's
max_position_embeddings, GPT-2's n_positions): `room` and `fits` answer the one question, `check_room` refuses
interactive work with the one message, `keep_fitting` skips and counts for batches, and the teacher-forced forwards
(`hooks.capture`, `forward_logits`) refuse an input over the context before any forward."""
import pytest
import torch

from backend.errors import UserError
from backend.models import load, skipped_line
from backend.models.hooks import capture
from backend.models.rules import NO_LIMIT, check_room, fits, forward_logits, keep_fitting, room


@pytest.mark.parametrize("model_id", ["tiny-llama", "tiny-gpt2"])
def test_room_and_fits_answer_the_one_question(model_id):
    model = load(model_id).model
    assert room(model, 0) == 256 and room(model, 250) == 6 and room(model, 256) == 0 and room(model, 300) == 0
    assert fits(model, 250, 6) and not fits(model, 250, 7) and fits(model, 256, 0) and not fits(model, 257, 0)


def test_a_model_without_a_context_length_has_no_limit():
    class Bare(torch.nn.Module):
        config = type("Config", (), {})()

    assert room(Bare(), 10**6) == NO_LIMIT and fits(Bare(), 10**6, 10**6)


def test_check_room_is_the_one_refusal_message():
    model = load("tiny-llama").model
    check_room(model, 250, 6)  # fits: nothing happens
    with pytest.raises(UserError, match=r"^The prompt has 250 tokens; with 7 new tokens that is over the model's "
                                        r"context of 256 tokens\. Shorten the prompt or ask for fewer new tokens\.$"):
        check_room(model, 250, 7)
    with pytest.raises(UserError, match=r"^Line 3: the input has 300 tokens, which is over the model's context of 256 "
                                        r"tokens\. Use fewer rows\.$"):
        check_room(model, 300, 0, "Line 3: the input", "Use fewer rows.")
    with pytest.raises(UserError, match="^The prompt is empty"):
        check_room(model, 0, 4)


def test_keep_fitting_skips_and_names_what_does_not_fit_and_refuses_an_empty_batch():
    model = load("tiny-llama").model
    items = [("a", 10), ("b", 250), ("c", 200), ("d", 300)]
    fit = keep_fitting(model, items, lambda i: i[1], 50, lambda i: i[0])
    assert fit.kept == (("a", 10), ("c", 200)) and fit.skipped == ("b", "d")
    assert skipped_line(fit.skipped) == ("2 problems skipped: the prompt leaves no room for the new tokens in the "
                                         "model's context (b, d).")
    assert skipped_line(()) == "" and "and 2 more" in skipped_line([str(i) for i in range(7)], "document")
    assert skipped_line(["x"], "document").startswith("1 document skipped")
    with pytest.raises(UserError, match="^No document fits the model's context of 256 tokens with 50 new tokens"):
        keep_fitting(model, items[1:2], lambda i: i[1], 50, lambda i: i[0], "document")


@pytest.mark.parametrize("model_id", ["tiny-llama", "tiny-gpt2"])
def test_trace_and_forward_logits_refuse_an_input_over_the_context_before_any_forward(model_id):
    """GPT-2 would otherwise index past its position table (a traceback); llama would read positions it never saw."""
    model = load(model_id).model
    calls = []
    hook = model.register_forward_pre_hook(lambda *a: calls.append(1))
    try:
        too_long = torch.ones(1, 257, dtype=torch.long)
        with pytest.raises(UserError, match=r"^The input has 257 tokens, which is over the model's context of 256"):
            capture(model, too_long)
        with pytest.raises(UserError, match="over the model's context of 256 tokens"):
            forward_logits(model, too_long)
        assert calls == []
        assert capture(model, too_long[:, :256]).logits.shape[1] == 256  # the whole context is allowed
    finally:
        hook.remove()
