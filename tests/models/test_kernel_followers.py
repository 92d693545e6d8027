"""The kernel's followers (a second model fed the lead decoder's tokens) and its per-row stop record."""
import pytest
import torch

from backend.models import load
from backend.models.kernel import decode, follow, greedy_policy, start

PROMPT = "Once upon a time"


@pytest.fixture(scope="module")
def lead_and_other():
    return load("tiny-llama"), load("tiny-qwen2")  # one byte-level tokenizer, two different models


def _ids(handle):
    return handle.tokenizer(PROMPT, return_tensors="pt")["input_ids"]


def _last_logits(handle, tokens):
    with torch.no_grad():
        return handle.model(input_ids=tokens).logits[:, -1, :].float()


def test_a_follower_read_every_step_sees_the_lead_tokens_through_selections(lead_and_other):
    lead, other = lead_and_other
    decoder = start(lead.model, _ids(lead), n=3, max_new_tokens=6)
    follower = follow(other.model, max_new_tokens=6)
    seen = []

    def policy(t, scores):
        seen.append((decoder.tokens.clone(), follower.logits.clone()))
        # the follower's model writes every token; the rows write different ones, so a selection moves real rows
        return (greedy_policy(t, follower.logits) + torch.arange(3)) % scores.shape[-1]

    def select(t, tokens):  # rows swap places at step 2: the follower's cache rows must follow
        return torch.tensor([2, 0, 1]) if t == 2 else None

    out = decode(decoder, policy, 6, followers=[follower], select=select)
    for tokens, logits in seen:  # each read equals the follower model's own forward over the lead's tokens
        torch.testing.assert_close(logits, _last_logits(other, tokens), atol=1e-5, rtol=1e-5)
    assert out.forward_passes == 6 and follower.forward_passes == 6  # one prefill and 5 steps each


def test_a_follower_is_computed_only_when_read(lead_and_other):
    lead, other = lead_and_other
    never = follow(other.model)
    decode(start(lead.model, _ids(lead), max_new_tokens=8), greedy_policy, 8, followers=[never])
    assert never.forward_passes == 0

    decoder = start(lead.model, _ids(lead), max_new_tokens=8)
    late = follow(other.model)
    reads = []

    def policy(t, scores):
        if t in (4, 7):  # a takeover now and then: one forward per read, catching up on the tokens it missed
            reads.append((late.logits.clone(), decoder.tokens.clone()))
        return greedy_policy(t, scores)

    decode(decoder, policy, 8, followers=[late])
    assert late.forward_passes == 2
    for logits, tokens in reads:
        torch.testing.assert_close(logits, _last_logits(other, tokens), atol=1e-5, rtol=1e-5)


def test_a_follower_is_read_only_inside_its_decode(lead_and_other):
    with pytest.raises(RuntimeError, match="inside the `decode`"):
        follow(lead_and_other[1].model).logits


def test_stopped_tells_a_stop_id_from_a_criterion_and_the_budget(lead_and_other):
    lead, _ = lead_and_other
    decoder = start(lead.model, _ids(lead), n=3, max_new_tokens=5)
    stop, newline = 258, 10

    def policy(t, scores):  # row 0 writes a stop id at step 1, row 1 a newline at step 2, row 2 never ends
        x = torch.full((3,), 65)
        x[0] = stop if t == 1 else 65
        x[1] = newline if t == 2 else 65
        return x

    def ends_on_newline(generated):
        return generated[:, -1] == newline

    out = decode(decoder, policy, 5, (stop,), criteria=[ends_on_newline])
    assert out.lengths.tolist() == [2, 3, 5] and out.stopped.tolist() == [True, False, False]
    assert out.row(0, keep_stop=False) == [65] and out.row(1, keep_stop=False) == [65, 65, newline]
    assert out.tokens[0, 2:].tolist() == [stop] * 3  # the kernel pads a finished row, with its stop id
