"""One stop rule for every feature that generates.

The tiny models are given a tokenizer eos (<|endoftext|>), a generation config listing two eos ids
(<|endoftext|>, <|im_start|>) and a chat template whose turns end with a third (<|im_end|>). The
model is then pushed to write one of those ids first; every feature's generation must stop right
there. A loop that stopped on the tokenizer's eos alone would run on to max_new_tokens.
"""
from __future__ import annotations

import pytest
import torch

from backend.decoding import STRATEGIES, DecodeConfig, run_one
from backend.disagreement import batched, intervention, rollout
from backend.disagreement.pair import check_pair
from backend.errors import UserError
from backend.models import load
from backend.models.generate import encode_prompt, generate_text
from backend.models.kernel import decode as kernel_decode, greedy_policy, start
from backend.models.rules import stop_ids
from backend.mt import steering
from backend.watermark.sampling import SamplingConfig, sample_candidates

ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
NEW = 12  # tokens a feature may write; stopping at the first means writing none besides the stop id


def _push(handle, token_id: int):
    """Make `token_id` the model's overwhelming next token at every position."""
    def hook(module, args, output):
        output = output.clone()
        output[..., token_id] += 1e4
        return output
    return handle.model.get_output_embeddings().register_forward_hook(hook)


@pytest.fixture(params=["second generation-config eos", "chat end-of-turn"])
def pushed(request, monkeypatch, fresh_store):
    """(base, reasoning, stop id the models now write first) with the eos setup of the module docstring."""
    handles = [load("tiny-llama"), load("tiny-qwen2")]
    tok = handles[0].tokenizer
    ids = {name: tok.convert_tokens_to_ids(name) for name in (ENDOFTEXT, IM_START, IM_END)}
    removers, old_eos = [], [h.tokenizer.eos_token for h in handles]
    for handle in handles:
        handle.tokenizer.eos_token = ENDOFTEXT  # a tokenizer attribute monkeypatch cannot restore
        monkeypatch.setattr(handle.model.generation_config, "eos_token_id", [ids[ENDOFTEXT], ids[IM_START]])
    target = ids[IM_START] if request.param.startswith("second") else ids[IM_END]
    for handle in handles:
        assert stop_ids(handle) == {ids[ENDOFTEXT], ids[IM_START], ids[IM_END]}
        removers.append(_push(handle, target))
    yield handles[0], handles[1], target
    for remove in removers:
        remove.remove()
    for handle, eos in zip(handles, old_eos):
        handle.tokenizer.eos_token = eos


QUESTION = "Tom has 3 apples and buys 2 more. How many apples does he have?"
TOO_LONG = "apples " * 60  # the byte-level tiny tokenizer: > 256 tokens, over the tiny models' context


def _prompt(handle, question: str) -> torch.Tensor:
    return encode_prompt(handle, question)


def _plain(base, reasoning, question):
    return list(generate_text(base, question, max_new_tokens=NEW).token_ids)


def _rollouts(base, reasoning, question):
    pair = check_pair(base, reasoning)
    greedy = rollout.greedy(base, _prompt(base, question), NEW, pair.stops)
    sampled = rollout.sample(base, _prompt(base, question), NEW, pair.stops, temperature=1.0, seed=0)
    return greedy + sampled


def _intervention(base, reasoning, question):
    pair = check_pair(base, reasoning)
    policy = intervention.FixedPositions(frozenset({0, 1}))
    return list(intervention.take_over(pair, _prompt(base, question), policy, NEW).token_ids)


def _batched_sweep(base, reasoning, question):
    pair = check_pair(base, reasoning)
    policies = [intervention.FixedPositions(frozenset()), intervention.FixedPositions(frozenset(), every=True)]
    return [t for row in batched.take_over_rows(pair, _prompt(base, question), policies, NEW) for t in row.token_ids]


def _watermark_sentences(base, reasoning, question):
    cfg = SamplingConfig(continue_past_eos=False, max_sentence_tokens=NEW)
    candidates = sample_candidates(base, _prompt(base, question), "", 3, cfg, torch.Generator().manual_seed(0), [])
    return [c.tokens for c in candidates if c.tokens]


def _watermark_after_a_sentence(base, reasoning, question):
    """After a sentence only whitespace-led tokens may start the next, and every stop id (not the tokenizer's eos
    alone): a chat end-of-turn ends the text there."""
    cfg = SamplingConfig(continue_past_eos=False, max_sentence_tokens=NEW)
    candidates = sample_candidates(base, _prompt(base, question), "It was late.", 3, cfg,
                                   torch.Generator().manual_seed(0), [])
    return [c.tokens for c in candidates if c.tokens]


def _mt_steering(base, reasoning, question):
    text = steering.generate_line(base.model, base.tokenizer, _prompt(base, question)[0].tolist(), NEW)
    return [text] if text else []


FEATURES = {"plain generation": _plain, "disagreement rollouts": _rollouts, "intervention": _intervention,
            "batched sweep": _batched_sweep, "watermark sentences": _watermark_sentences,
            "watermark sentence after a sentence": _watermark_after_a_sentence, "mt steering": _mt_steering}


@pytest.mark.parametrize("feature", FEATURES)
def test_every_feature_stops_at_the_first_stop_id(feature, pushed):
    base, reasoning, _ = pushed
    written = FEATURES[feature](base, reasoning, QUESTION)
    assert written == []  # nothing but the stop id, which no feature returns as text


@pytest.mark.parametrize("feature", FEATURES)
def test_every_feature_refuses_a_prompt_over_the_context_before_any_forward(feature, fresh_store):
    base, reasoning = load("tiny-llama"), load("tiny-qwen2")
    calls = []
    hooks = [h.model.register_forward_pre_hook(lambda *a: calls.append(1)) for h in (base, reasoning)]
    try:
        with pytest.raises(UserError, match="over the model's context of 256 tokens"):
            FEATURES[feature](base, reasoning, TOO_LONG)
    finally:
        for hook in hooks:
            hook.remove()
    assert calls == []


@pytest.mark.parametrize("strategy", STRATEGIES.names())
def test_every_decoding_strategy_stops_at_the_first_stop_id(strategy, pushed):
    base, reasoning, stop = pushed
    extra = {"guided": {"reasoning_model": reasoning.id, "calibration_problems": 2},
             "rc": {"summary_tokens": 8, "cycles": 2, "summary_instruction": "Sum up."}}.get(strategy, {})  # RC fits 256
    config = DecodeConfig(strategy=strategy, max_new_tokens=NEW, n=3, block_size=3, mh_steps=1, alpha=2.0,
                          seed=11, extra=extra)
    result = run_one(base, QUESTION, config).value
    assert list(result.token_ids) in ([], [stop])


def test_the_kernel_feeds_finished_rows_a_pad_and_counts_only_live_tokens(tiny_handle):
    """Rows stop independently: a row that wrote a stop id keeps its length while the others go on."""
    stops = tuple(stop_ids(tiny_handle))
    decoder = start(tiny_handle.model, _prompt(tiny_handle, QUESTION), n=2, max_new_tokens=5)

    def policy(t, scores):
        x = greedy_policy(t, scores)
        x[0] = stops[0] if t == 1 else x[0]  # row 0 stops at its second token
        x[1] = 65 if x[1] in stops else x[1]  # row 1 never does
        return x

    out = kernel_decode(decoder, policy, 5, stops)
    assert out.lengths.tolist() == [2, 5]
    assert out.tokens[0, 2:].tolist() == [min(stops)] * 3 and out.row(0, keep_stop=False) \
        == out.tokens[0, :1].tolist() and out.stopped.tolist() == [True, False]


def test_a_prompt_over_the_context_is_refused_before_any_forward(tiny_handle):
    calls = []
    handle_ = tiny_handle.model.register_forward_pre_hook(lambda *a: calls.append(1))
    try:
        long_prompt = torch.ones(1, 250, dtype=torch.long)
        with pytest.raises(UserError, match="over the model's context of 256 tokens"):
            start(tiny_handle.model, long_prompt, max_new_tokens=10)
    finally:
        handle_.remove()
    assert calls == []
