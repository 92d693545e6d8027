"""Greedy decoding checked in chunks: the same tokens as the step-by-step greedy loop, fewer weight reads.

At batch 1 on a CPU a decoding step is bound by reading the weights (SmolLM2-135M: 0.5 GB per token,
85 % of the step in `mm`), and a forward over k+1 positions costs far less than k+1 forwards. So a
cheap draft (the model's own weight-only int8 copy, backend/models/reduced.py) guesses k tokens, and one
forward of the reference model over `[x, guess_1 .. guess_k]` gives its own greedy choice after each:
the guesses it agrees with are kept, the first disagreement is replaced by its choice, the rest is
dropped from both caches. Every token written is the reference model's argmax given the tokens before
it, so the output is the reference greedy output (up to the order of floating-point sums in a k+1-row
matmul against a one-row one, which can only flip an exact near-tie).

Only plain greedy at batch 1 over a full-attention cache qualifies (`eligible`): processors, hooks on
the model, resampling or a sliding-window cache (which cannot be rolled back) take the step-by-step loop.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn
from transformers.cache_utils import DynamicLayer

from backend.models.decoding import IncrementalDecoder
from backend.models.reduced import reduced_copy, supported

LOOKAHEAD = 4  # guesses per check: measured best of 2..8 on SmolLM2 (bench/kernel.py --against generate)


def _hooked(model: nn.Module) -> bool:
    return any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def eligible(decoder: IncrementalDecoder) -> bool:
    """Whether `decoder` can be decoded greedily in checked chunks (see the module docstring)."""
    layers = getattr(decoder.cache, "layers", None)
    return (decoder.batch_size == 1 and decoder.attention_mask is None and decoder.resample == "reorder"
            and supported(decoder.model) and not _hooked(decoder.model)
            and bool(layers) and all(type(layer) is DynamicLayer for layer in layers))


@torch.no_grad()
def greedy_in_chunks(decoder: IncrementalDecoder, max_new_tokens: int, stops: Sequence[int],
                     lookahead: int | None = None, on_step: Callable[[int], None] | None = None
                     ) -> tuple[list[int], int]:
    """Greedy tokens (up to and including a stop id) from an eligible prefilled decoder, and the number of
    checking forwards. The decoder is spent afterwards (its cache may hold a guess past a stop)."""
    stop, lookahead = set(stops), lookahead or LOOKAHEAD
    draft = IncrementalDecoder(reduced_copy(decoder.model, "int8", round_head=True), lock_model=decoder.lock_model)
    draft.prefill(decoder.tokens)
    pending: list[int] = []  # tokens written that the draft has not read yet
    out: list[int] = []
    passes = 0
    while True:
        x = int(decoder.logits[0].argmax())
        out.append(x)
        if on_step is not None:
            on_step(len(out) - 1)
        if x in stop or len(out) >= max_new_tokens:
            break
        guesses: list[int] = []
        feed = pending + [x]
        for _ in range(min(lookahead, max_new_tokens - len(out))):
            logits = draft.extend(torch.tensor([feed]))
            guess = int(logits[0].argmax())
            guesses.append(guess)
            feed = [guess]
        pending = feed  # the last guess was never read by the draft
        checked = decoder.extend_all(torch.tensor([[x, *guesses]]))
        passes += 1
        choice = checked.argmax(-1).tolist()  # the reference model's token after x, after guess 1, ...
        kept = 0
        while kept < len(guesses) and guesses[kept] == choice[kept]:
            kept += 1
        for token in guesses[:kept]:
            out.append(token)
            if on_step is not None:
                on_step(len(out) - 1)
            if token in stop:
                break
        if out[-1] in stop:
            break
        rejected = len(guesses) - kept
        decoder.drop_last(rejected, checked[kept:kept + 1].clone())
        if rejected:  # the draft read every guess but the last: forget those not kept
            draft.drop_last(rejected - 1)
            pending = []
        if len(out) >= max_new_tokens:
            break
    return out, passes
