import torch

from backend.models.incremental import IncrementalDecoder
from backend.models.hooks import Hooks


def _prompt(handle):
    return handle.tokenizer("Once upon a time", return_tensors="pt")["input_ids"]


def _full_logits(handle, tokens):
    with torch.no_grad():
        return handle.model(input_ids=tokens).logits[:, -1, :].float()


def test_incremental_logits_match_full_forward(tiny_handle):
    decoder = IncrementalDecoder(tiny_handle.model)
    decoder.prefill(_prompt(tiny_handle), n=3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        tokens = torch.randint(0, tiny_handle.info.vocab_size, (3,), generator=gen)
        decoder.step(tokens)
    torch.testing.assert_close(decoder.logits, _full_logits(tiny_handle, decoder.tokens), atol=1e-5, rtol=1e-5)
    assert decoder.forward_passes == 6


def test_reorder_rows_keeps_cache_coherent(tiny_handle):
    """After resampling ancestors, each row's cached next-token logits equal a recomputation of its prefix."""
    decoder = IncrementalDecoder(tiny_handle.model)
    decoder.prefill(_prompt(tiny_handle), n=4)
    gen = torch.Generator().manual_seed(1)
    for step in range(6):
        decoder.step(torch.randint(0, tiny_handle.info.vocab_size, (4,), generator=gen))
        if step == 2:
            decoder.select(torch.tensor([3, 3, 0, 1]))
    torch.testing.assert_close(decoder.logits, _full_logits(tiny_handle, decoder.tokens), atol=1e-5, rtol=1e-5)
    assert decoder.tokens.shape == (4, _prompt(tiny_handle).shape[1] + 6)


def test_steering_at_last_position_applies_on_every_step(tiny_handle):
    from backend.models.hooks import OutputAdd

    info = tiny_handle.info
    vector = torch.randn(info.hidden_size)
    plain = IncrementalDecoder(tiny_handle.model)
    plain.prefill(_prompt(tiny_handle))
    steered = IncrementalDecoder(tiny_handle.model)
    with Hooks(tiny_handle.model, output_adds=[OutputAdd(0, vector, position=-1, scale=3.0)]):
        steered.prefill(_prompt(tiny_handle))
        first = steered.logits.clone()
        steered.step(torch.tensor([5]))
    plain.step(torch.tensor([5]))
    assert not torch.allclose(first, _full_logits(tiny_handle, _prompt(tiny_handle)))
    assert not torch.allclose(steered.logits, plain.logits)


def test_extend_equals_steps(tiny_handle):
    a, b = IncrementalDecoder(tiny_handle.model), IncrementalDecoder(tiny_handle.model)
    a.prefill(_prompt(tiny_handle))
    b.prefill(_prompt(tiny_handle))
    chunk = torch.tensor([[5, 6, 7]])
    a.extend(chunk)
    for t in chunk[0]:
        b.step(t.view(1))
    torch.testing.assert_close(a.logits, b.logits, atol=1e-5, rtol=1e-5)
    assert a.forward_passes == 2 and b.forward_passes == 4


def test_left_padded_rows_compute_what_each_prompt_computes_alone(tiny_handle):
    """prefill_many: prompts of different lengths side by side (past the tiny Gemma's sliding window), then steps
    and a reorder; each row's logits equal its prompt's own unpadded forward."""
    tok = tiny_handle.tokenizer
    texts = ["Once upon a time", "A much longer prompt that runs on for a while and then some more", "Hi"]
    prompts = [tok(t, return_tensors="pt")["input_ids"] for t in texts]
    decoder = IncrementalDecoder(tiny_handle.model)
    decoder.prefill_many(prompts, pad_id=0)
    for row, prompt in enumerate(prompts):
        torch.testing.assert_close(decoder.logits[row:row + 1], _full_logits(tiny_handle, prompt), atol=1e-4,
                                   rtol=1e-4)
    gen = torch.Generator().manual_seed(2)
    generated = [[] for _ in prompts]
    for step in range(8):
        tokens = torch.randint(0, tiny_handle.info.vocab_size, (len(prompts),), generator=gen)
        decoder.step(tokens)
        generated = [g + [int(t)] for g, t in zip(generated, tokens)]
        if step == 3:  # rows follow a reorder: their masks and positions go with them
            order = [2, 0, 1]
            decoder.select(torch.tensor(order))
            prompts, generated = [prompts[i] for i in order], [generated[i] for i in order]
    for row, (prompt, tokens) in enumerate(zip(prompts, generated)):
        alone = torch.cat([prompt, torch.tensor([tokens])], dim=1)
        torch.testing.assert_close(decoder.logits[row:row + 1], _full_logits(tiny_handle, alone), atol=1e-4,
                                   rtol=1e-4)


def test_left_padded_greedy_decode_equals_one_prompt_at_a_time(tiny_handle):
    from backend.models.kernel import decode, greedy_policy, start, start_many

    tok = tiny_handle.tokenizer
    prompts = [tok(t, return_tensors="pt")["input_ids"] for t in ("The cat", "Seven plus eight is fifteen, so")]
    together = decode(start_many(tiny_handle.model, prompts, max_new_tokens=10), greedy_policy, 10)
    for row, prompt in enumerate(prompts):
        alone = decode(start(tiny_handle.model, prompt, max_new_tokens=10), greedy_policy, 10)
        assert together.row(row) == alone.row(0)
