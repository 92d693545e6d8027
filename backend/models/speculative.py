"""Greedy decoding checked in chunks: the same tokens as the step-by-step greedy loop, fewer weight reads.

At batch 1 on a CPU a decoding step is bound by reading the weights (SmolLM2-135M: 0.5 GB per token,
85 % of the step in `mm`), and a forward over k+1 positions costs far less than k+1 forwards. So a
cheap draft (the model's own weight-only int8 copy, backend/models/reduced.py) guesses k tokens, and one
forward of the reference model over `[x, guess_1 .. guess_k]` gives its own greedy choice after each:
the guesses it agrees with are kept, the first disagreement is replaced by its choice, the rest is
dropped from both caches. Every token written is the reference model's argmax given the tokens before
it, so the output is the reference greedy output (up to the order of floating-point sums in a k+1-row
matmul against a one-row one, which can only flip an exact near-tie).

Only plain greedy at batch 1 qualifies (`eligible`): processors, hooks on the model, resampling, or a
sliding-window cache the text would outgrow (it could not be rolled back) take the step-by-step loop.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

from backend.models.incremental import IncrementalDecoder
from backend.models.reduced import reduced_copy, supported

# Counted on SmolLM2 (7 chat prompts x 96 tokens, identical tokens throughout), against 4 / 4 / none:
# 6 / 8 / 0.3 took 1.4 % fewer checking forwards and 8 % fewer draft forwards; a 0.6 threshold cut draft
# forwards by 25 % but needed 47 % more checks.
LOOKAHEAD = 6  # most draft guesses per check
REPEAT_LOOKAHEAD = 8  # most guesses per check from repeated text (free to make: only the check's width grows)
DRAFT_CONFIDENCE = 0.3  # the draft stops guessing after a guess it gives less probability than this
MIN_NEW_TOKENS = 32  # a shorter run would not earn back the draft's prefill (and, the first time, its build)


@dataclass
class Checks:
    """What the checking forwards did: per guess source ("repeated" text, the int8 "draft"), how many guesses
    were checked and how many the reference model kept (the acceptance rate the speed depends on)."""

    forwards: int = 0
    guessed: dict[str, int] = field(default_factory=lambda: {"repeated": 0, "draft": 0})
    kept: dict[str, int] = field(default_factory=lambda: {"repeated": 0, "draft": 0})

    def acceptance(self, source: str | None = None) -> float | None:
        """Kept / checked guesses from `source` (all sources when None); None when none was checked."""
        sources = [source] if source else list(self.guessed)
        guessed = sum(self.guessed[s] for s in sources)
        return sum(self.kept[s] for s in sources) / guessed if guessed else None


# transformers installs these once a forward asks for attentions or hidden states, and leaves them on the model;
# they record nothing unless a forward asks again, so they do not change what a chunk computes.
_PASSIVE_HOOKS = {"output_capturing_hook"}


def _hooked(model: nn.Module) -> bool:
    """Whether a hook (steering, ablation, a trace) could act on a forward of `model`."""
    return any(getattr(hook, "__name__", "") not in _PASSIVE_HOOKS
               for m in model.modules() for hook in (*m._forward_hooks.values(), *m._forward_pre_hooks.values()))


def _can_roll_back(layer, longest: int) -> bool:
    """A full-attention layer always can; a sliding-window one (Gemma 3) only while it holds the whole text."""
    if type(layer) is DynamicLayer:
        return True
    return type(layer) is DynamicSlidingWindowLayer and longest < layer.sliding_window


def eligible(decoder: IncrementalDecoder, max_new_tokens: int) -> bool:
    """Whether `decoder` can be decoded greedily in checked chunks for max_new_tokens (see the module docstring)."""
    layers = getattr(decoder.cache, "layers", None)
    longest = decoder.length + max_new_tokens + max(LOOKAHEAD, REPEAT_LOOKAHEAD)
    return (max_new_tokens >= MIN_NEW_TOKENS and decoder.batch_size == 1 and decoder.attention_mask is None
            and decoder.resample == "reorder"
            and supported(decoder.model) and not _hooked(decoder.model)
            and bool(layers) and all(_can_roll_back(layer, longest) for layer in layers))


def repeated(history: Sequence[int], k: int, longest: int = 3) -> list[int]:
    """Up to k tokens that followed the latest earlier occurrence of the last n tokens of `history` (n = longest
    down to 2): text often repeats its prompt or itself, and such guesses cost no forward at all."""
    for n in range(longest, 1, -1):
        if len(history) <= n:
            continue
        tail = list(history[-n:])
        for j in range(len(history) - n - 1, -1, -1):
            if list(history[j:j + n]) == tail:
                return list(history[j + n:j + n + k])
    return []


def _guess_with_draft(draft: IncrementalDecoder, unread: list[int], k: int, confidence: float = 0.0) -> list[int]:
    """Up to k greedy guesses of the draft after reading `unread`, fewer once the draft is itself unsure (its
    probability of a guess below `confidence`: the guesses after such a one are mostly rejected, and each costs a
    draft forward); the draft reads every guess but the last."""
    guesses, feed = [], unread
    for _ in range(k):
        logits = draft.extend(torch.tensor([feed]))[0]
        guesses.append(int(logits.argmax()))
        feed = guesses[-1:]
        if confidence and len(guesses) < k and float(torch.softmax(logits, dim=-1)[guesses[-1]]) < confidence:
            break
    return guesses


@torch.no_grad()
def greedy_in_chunks(decoder: IncrementalDecoder, max_new_tokens: int, stops: Sequence[int],
                     lookahead: int | None = None, on_step: Callable[[int], None] | None = None
                     ) -> tuple[list[int], list[float], Checks]:
    """Greedy tokens (up to and including a stop id) from an eligible prefilled decoder, each token's
    log-probability under the reference model, and what the checking forwards did (`Checks`). The decoder is spent
    afterwards (its cache may hold a guess past a stop).

    Guesses come from the text itself when its last tokens occurred before (`repeated`), else from the draft."""
    stop, lookahead = set(stops), lookahead or LOOKAHEAD
    draft = IncrementalDecoder(reduced_copy(decoder.model, "int8", round_head=True), lock_model=decoder.lock_model)
    draft.prefill(decoder.tokens)
    history = decoder.tokens[0].tolist()
    unread: list[int] = []  # tokens written that the draft has not read yet
    out: list[int] = []
    log_p: list[float] = []
    checks = Checks()

    def write(token: int, logits: torch.Tensor) -> bool:  # True when the row ends here
        out.append(token)
        log_p.append(float(torch.log_softmax(logits.float(), dim=-1)[token]))
        history.append(token)
        if on_step is not None:
            on_step(len(out) - 1)
        return token in stop or len(out) >= max_new_tokens

    while not write(int(decoder.logits[0].argmax()), decoder.logits[0]):
        x, room = out[-1], max_new_tokens - len(out)
        unread.append(x)
        guesses = repeated(history, min(REPEAT_LOOKAHEAD, room))
        from_draft = not guesses
        if from_draft:
            guesses = _guess_with_draft(draft, unread, min(lookahead, room), DRAFT_CONFIDENCE)
            unread = []
        checked = decoder.extend_all(torch.tensor([[x, *guesses]]))
        choice = checked.argmax(-1).tolist()  # the reference model's token after x, after guess 1, ...
        kept = 0
        while kept < len(guesses) and guesses[kept] == choice[kept]:
            kept += 1
        source = "draft" if from_draft else "repeated"
        checks.forwards += 1
        checks.guessed[source] += len(guesses)
        checks.kept[source] += kept
        if any(write(token, checked[i]) for i, token in enumerate(guesses[:kept])):
            break
        rejected = len(guesses) - kept
        decoder.drop_last(rejected, checked[kept:kept + 1].clone())
        if not from_draft:
            unread += guesses[:kept]
        elif rejected:  # the draft read every guess but the last: forget those not kept
            draft.drop_last(rejected - 1)
        else:
            unread = guesses[-1:]
    return out, log_p, checks
