"""The one token loop: every feature that generates is a policy over `decode`.

    decoder = start(model, prompt_ids, n, max_new_tokens)   # prefill once, broadcast to n rows, context rule
    decoder = start_many(model, [ids_a, ids_b], max_new_tokens)  # or one row per prompt, left-padded
    out = decode(decoder, policy, max_new_tokens, stop_ids(handle), processors=..., select=...)
    helper = follow(other_model)                         # a second model fed the same tokens (two-model policies)
    out = decode(decoder, policy, max_new_tokens, stops, followers=[helper])   # the policy reads helper.logits

Per step the kernel applies the logits processors (transformers' `LogitsProcessor` signature:
`(input_ids [N, L], scores [N, V]) -> scores`), asks the policy for one token per row, feeds a
finished row a pad token instead (the batch stays rectangular), marks rows that wrote a stop id or
met a stopping criterion (transformers' `StoppingCriteria` idea: generated ids -> bool per row) as
finished, lets `select` resample or drop rows (cache rows follow, nothing is recomputed), and steps
the decoder unless every row is done or the budget is spent (no forward for a token nobody reads).
A policy keeps whatever per-token record it needs (log-probabilities, signals) in its own closure.
`Decoded.stopped` says which rows ended on a stop id, so no policy checks stop ids itself.

A follower is a second model's decoder that the kernel keeps on the same tokens as the lead decoder (same rows,
same selections). It is computed when the policy reads `follower.logits`, catching up on every token it missed
in one forward: a policy that reads it every step steps it every step; one that reads it rarely (a takeover
here and there) pays one forward per read, and none when it never reads.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import torch
from torch import nn

from backend.models import speculative
from backend.models.incremental import IncrementalDecoder
from backend.models.reduced import reduced_copy

Policy = Callable[[int, torch.Tensor], torch.Tensor]  # (step, scores [N, V]) -> one token per row [N]
Processor = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (input_ids [N, L], scores [N, V]) -> scores
Selector = Callable[[int, torch.Tensor], "torch.Tensor | None"]  # (step, tokens [N]) -> row index, or None
Criterion = Callable[[torch.Tensor], torch.Tensor]  # (generated so far [N, t]) -> bool [N]: the row has ended


@dataclass(frozen=True)
class Decoded:
    """Rows decoded side by side. `tokens` `[N, steps]` (CPU) hold the stop token where a row stopped and the pad
    token after it; `lengths` `[N]` count tokens up to and including the stop token."""

    tokens: torch.Tensor
    lengths: torch.Tensor
    forward_passes: int
    stopped: torch.Tensor  # [N] bool: the row's last token is a stop id (not a criterion's end, not the budget)
    log_p: torch.Tensor  # [N, steps] each written token's log-probability under the model (temperature 1, before
    # any processor); 0 where the row had finished

    def row(self, i: int, keep_stop: bool = True) -> list[int]:
        ids = self.tokens[i, : int(self.lengths[i])].tolist()
        if not keep_stop and bool(self.stopped[i]):
            ids.pop()
        return ids


class Follower:
    """A second model's decoder fed the lead decoder's tokens (see the module docstring); `decode` binds it."""

    def __init__(self, model: nn.Module, max_new_tokens: int = 0):
        self.decoder = IncrementalDecoder(model)
        self.max_new_tokens = max_new_tokens  # the context rule, applied when it is first prefilled
        self.lead: IncrementalDecoder | None = None

    @property
    def forward_passes(self) -> int:
        return self.decoder.forward_passes

    @property
    def logits(self) -> torch.Tensor:
        """The follower's next-token logits `[N, V]` after the lead's tokens (caught up now if behind)."""
        if self.lead is None:
            raise RuntimeError("a follower is read inside the `decode` it follows")
        lead, own = self.lead, self.decoder
        if own.tokens is None:  # first read: the prompt (and any text already written) in one prefill
            if lead.attention_mask is not None:
                raise ValueError("a follower follows a decoder started from one prompt (`start`)")
            written = lead.length - lead.prompt_length
            room = max(self.max_new_tokens - written, 0)
            if lead.batch_size == 1:
                own.prefill(lead.tokens, max_new_tokens=room)
            else:  # one prompt broadcast to the rows, then the text they wrote since
                own.prefill(lead.tokens[:1, : lead.prompt_length], n=lead.batch_size, max_new_tokens=room)
                if written:
                    own.extend(lead.tokens[:, lead.prompt_length:])
        missing = lead.length - own.length
        if missing == 1:
            own.step(lead.tokens[:, -1])
        elif missing > 1:
            own.extend(lead.tokens[:, -missing:])
        return own.logits

    def select(self, index: torch.Tensor) -> None:
        if self.decoder.tokens is not None:  # rows it has not computed yet follow the lead's tokens anyway
            self.decoder.select(index)


def follow(model: nn.Module, max_new_tokens: int = 0) -> Follower:
    """A follower for `decode(..., followers=[...])`; max_new_tokens: the context rule on its first prefill."""
    return Follower(model, max_new_tokens)


def start(model: nn.Module, prompt_ids: torch.Tensor, n: int = 1, max_new_tokens: int = 0,
          resample: str = "reorder", precision: str = "reference") -> IncrementalDecoder:
    """A decoder with `prompt_ids` `[1, T]` prefilled and broadcast to n rows; refuses (before any forward) a
    prompt that leaves no room for max_new_tokens. precision "int8"/"bf16" decodes on the model's
    reduced-precision copy, "packed" on its weights packed for n rows (backend/models/reduced.py: generation-only
    features, opt-in)."""
    decoder = IncrementalDecoder(reduced_copy(model, precision, rows=n), resample=resample, lock_model=model)
    decoder.prefill(prompt_ids, n=n, max_new_tokens=max_new_tokens)
    return decoder


def start_many(model: nn.Module, prompts: Sequence[torch.Tensor], max_new_tokens: int = 0,
               pad_id: int = 0, precision: str = "reference") -> IncrementalDecoder:
    """A decoder with one row per prompt (each `[1, T_i]`), left-padded to the longest (many problems decoded
    side by side: on CPU a step over a few rows costs little more than over one)."""
    decoder = IncrementalDecoder(reduced_copy(model, precision, rows=len(prompts)), lock_model=model)
    decoder.prefill_many(list(prompts), max_new_tokens=max_new_tokens, pad_id=pad_id)
    return decoder


def start_shared_prefix(model: nn.Module, prompt_ids: torch.Tensor, n: int, shared: int,
                        during_rest: Callable[[], AbstractContextManager] = nullcontext) -> IncrementalDecoder:
    """n rows of `prompt_ids` `[1, T]` that differ only from position `shared` on (activation patching runs one
    prompt many times, each with a change at one position): the first `shared` tokens are prefilled once and
    broadcast, then the rest goes to every row in one forward inside `during_rest()` (the caller's row-wise hooks,
    which so see positions shared.. only). `logits` `[n, V]` are then each row's next-token logits."""
    if shared == 0:
        with during_rest():
            return start_many(model, [prompt_ids] * n)
    decoder = start(model, prompt_ids[:, :shared], n=n, max_new_tokens=prompt_ids.shape[1] - shared)
    with during_rest():
        decoder.extend(prompt_ids[:, shared:].expand(n, -1))
    return decoder


def greedy_policy(step: int, scores: torch.Tensor) -> torch.Tensor:
    return scores.argmax(dim=-1)


def temperature(value: float) -> Processor:
    """transformers' temperature warper as a processor: scores / value. Processors before it shape the model's
    distribution; a watermark processor goes after it, where `generate` applies one."""
    def apply(input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        return scores / value
    return apply


def log_probs(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log softmax(logits / temperature) `[N, V]`, fp32: the one place a distribution is taken from scores."""
    return torch.log_softmax(logits.float() / temperature, dim=-1)


def draw(log_q: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One token per row `[N]` from exp(log_q) `[N, V]`: the one sampler (inverse-CDF draws on the caller's CPU
    generator, so a seed gives the same tokens on every device)."""
    return torch.multinomial(log_q.exp().cpu(), 1, generator=generator).view(-1).to(log_q.device)


def sampling_policy(temperature: float, generator: torch.Generator) -> Policy:
    """Ancestral sampling from softmax(scores / temperature) with the caller's generator."""
    def policy(step: int, scores: torch.Tensor) -> torch.Tensor:
        return draw(log_probs(scores, temperature), generator)
    return policy


@torch.no_grad()
def decode(decoder: IncrementalDecoder, policy: Policy, max_new_tokens: int, stops: Sequence[int] = (), *,
           processors: Sequence[Processor] = (), select: Selector | None = None, stop_at_eos: bool = True,
           criteria: Sequence[Criterion] = (), followers: Sequence[Follower] = (),
           pad: int | None = None, on_step: Callable[[int], None] | None = None, speculate: bool = False
           ) -> Decoded:
    """Up to max_new_tokens tokens per row from a prefilled decoder (see the module docstring).

    speculate: plain greedy at batch 1 is decoded in checked chunks (backend/models/speculative.py: the same
    tokens, fewer reads of the weights) when nothing else acts on the step."""
    if (speculate and policy is greedy_policy and not processors and select is None and not criteria
            and not followers and speculative.eligible(decoder, max_new_tokens)):
        stops = stops if stop_at_eos else ()
        ids, log_p, _ = speculative.greedy_in_chunks(decoder, max_new_tokens, stops, on_step=on_step)
        return Decoded(tokens=torch.tensor([ids]), lengths=torch.tensor([len(ids)]),
                       forward_passes=decoder.forward_passes, stopped=torch.tensor([bool(ids) and ids[-1] in stops]),
                       log_p=torch.tensor([log_p]))
    for follower in followers:
        follower.lead = decoder
    dev = decoder.logits.device
    stop = torch.tensor(sorted(stops) or [-1], device=dev)
    pad = (min(stops) if stops else 0) if pad is None else pad
    tokens = torch.empty(decoder.batch_size, 0, dtype=torch.long, device=dev)
    lengths = torch.zeros(decoder.batch_size, dtype=torch.long, device=dev)
    stopped = torch.zeros(decoder.batch_size, dtype=torch.bool, device=dev)
    log_p = torch.empty(decoder.batch_size, 0, device=dev)
    for t in range(max_new_tokens):
        scores = decoder.logits
        raw = scores
        for processor in processors:
            scores = processor(decoder.tokens, scores)
        x = policy(t, scores).to(dev)
        finished = decoder.finished
        x = torch.where(finished, pad, x)
        lengths += (~finished).long()
        tokens = torch.cat([tokens, x[:, None]], dim=1)
        chosen = log_probs(raw).gather(1, x[:, None]).view(-1)
        log_p = torch.cat([log_p, torch.where(finished, 0.0, chosen)[:, None]], dim=1)
        if stop_at_eos:
            stopped = stopped | (torch.isin(x, stop) & ~finished)
            decoder.finished = finished | stopped
        for criterion in criteria:  # a row that ends on its text (a newline, a sentence) ends after this token
            decoder.finished = decoder.finished | (criterion(tokens).to(dev) & ~finished)
        if select is not None:
            index = select(t, x)
            if index is not None:
                index = index.to(dev).long()
                decoder.select(index)
                for follower in followers:
                    follower.select(index)
                tokens, lengths, stopped, x = tokens[index], lengths[index], stopped[index], x[index]
                log_p = log_p[index]
        if on_step is not None:
            on_step(t)
        if t == max_new_tokens - 1 or decoder.batch_size == 0 or bool(decoder.finished.all()):
            break
        decoder.step(x)
    return Decoded(tokens=tokens.cpu(), lengths=lengths.cpu(), forward_passes=decoder.forward_passes,
                   stopped=stopped.cpu(), log_p=log_p.cpu())
