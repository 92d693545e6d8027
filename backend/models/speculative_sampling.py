"""Sampling in checked chunks: speculative sampling with exact rejection, batched over rows (opt-in).

A draft model (by default the reference model's int8 copy, backend/models/reduced.py) samples k tokens per row
from its own distribution q; one forward of the reference model over `[y, g_1 .. g_k]` gives p after each. Row by
row, guess g_j is kept with probability min(1, p_j(g_j) / q_j(g_j)) while all before it were kept; at the first
rejection the row draws its next token from norm(max(0, p_j - q_j)), and when all k are kept it draws a bonus token
from p_{k+1}. Every written token is then distributed as p given the tokens before it (Leviathan et al. 2023,
Chen et al. 2023), so the text has the distribution of plain sampling; the seeded tokens differ from it, which
is why nothing uses this unless asked. Temperature, top-k and top-p shape p and q alike before the ratio.

Rows keep different numbers of guesses. Instead of rolling each row's cache back by a different amount, every
chunk keeps its k+1 cache slots in all rows and the rejected guesses become holes in the attention mask; position
ids count the unmasked slots, so a row with holes computes what it would without them (up to summation order).
Both caches (reference and draft) share one slot layout and one mask. A row that has ended (stop id, or its
token budget) rides along until the last row ends; tokens past its end are never written.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from backend.models.incremental import IncrementalDecoder
from backend.models.kernel import Decoded
from backend.models.locks import model_lock
from backend.models.reduced import reduced_copy, supported
from backend.models.speculative import _hooked

LOOKAHEAD = 3  # draft tokens per chunk


@dataclass(frozen=True)
class Warp:
    """How scores become the sampled distribution (applied to the reference model's and the draft's alike):
    softmax(scores / temperature), then top-k (0: off) and top-p (1: off) truncation, renormalised."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0

    def probs(self, logits: torch.Tensor) -> torch.Tensor:
        """`[..., V]` logits -> `[..., V]` probabilities (fp32)."""
        scores = logits.float() / self.temperature
        if 0 < self.top_k < scores.shape[-1]:
            kth = scores.topk(self.top_k, dim=-1).values[..., -1:]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        if self.top_p < 1.0:  # transformers' rule: drop the tail whose mass lies above top_p, keep at least one
            sorted_p, order = probs.sort(dim=-1, descending=True)
            drop_sorted = (sorted_p.cumsum(-1) - sorted_p) >= self.top_p
            drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
            probs = probs.masked_fill(drop, 0.0)
            probs = probs / probs.sum(-1, keepdim=True)
        return probs


@dataclass(frozen=True)
class SpeculativeSample:
    decoded: Decoded
    proposed: int  # draft tokens checked, over all rows (rows that had ended not counted)
    accepted: int  # of which kept

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.proposed if self.proposed else 0.0


def eligible(decoder: IncrementalDecoder, draft: nn.Module | None = None) -> bool:
    """A decoder started from one prompt (`kernel.start`), on full-attention caches (holes in a sliding window
    would shrink it), with no hook that could act on either model (the default draft is built without hooks)."""
    layers = getattr(decoder.cache, "layers", None)
    return (decoder.attention_mask is None and decoder.resample == "reorder" and supported(decoder.model)
            and not _hooked(decoder.model) and not (draft is not None and _hooked(draft))
            and bool(layers) and all(type(layer) is DynamicLayer for layer in layers))


def _accepted(ratio: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """Guess j of a row is kept when u_j < p_j(g_j) / q_j(g_j) (`[N, k]` bool, before the 'all before kept')."""
    return uniform < ratio


def _sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One token per row `[N]` from `probs` `[N, V]` (need not sum to 1), on the caller's CPU generator: the
    inverse CDF at a uniform draw (20x cheaper than `torch.multinomial` over a 49k vocabulary; a token of
    probability 0 is never drawn, as the first cumulative sum above the draw is taken)."""
    cdf = probs.double().cumsum(dim=-1).cpu()
    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=torch.float64) * cdf[:, -1:]
    return torch.searchsorted(cdf, u, right=True).clamp(max=probs.shape[-1] - 1).view(-1).to(probs.device)


class _Slots:
    """One cache for one model over the shared slot layout: it reads the slots it has not read yet."""

    def __init__(self, model: nn.Module, lock_model: nn.Module, cache: DynamicCache, read: int):
        self.model, self.lock_model, self.cache, self.read = model, lock_model, cache, read
        self.forward_passes = 0

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor, upto: int, keep: int = 1) -> torch.Tensor:
        """Read slots read..upto-1 of `tokens` `[N, L]`; logits after the last `keep` of them `[N, keep, V]`."""
        ids, visible = tokens[:, self.read:upto], mask[:, :upto]
        positions = (visible.cumsum(dim=1) - 1).clamp(min=0)[:, self.read:upto]
        with model_lock(self.lock_model):
            out = self.model(input_ids=ids, cache=self.cache, use_cache=True, attention_mask=visible,
                             position_ids=positions, logits_to_keep=keep)
        self.read = upto
        self.forward_passes += 1
        return out.logits.float()


@torch.no_grad()
def sample_in_chunks(decoder: IncrementalDecoder, max_new_tokens: int, generator: torch.Generator,
                     warp: Warp = Warp(), stops: Sequence[int] = (), draft: nn.Module | None = None,
                     lookahead: int = LOOKAHEAD, on_step: Callable[[int], None] | None = None) -> SpeculativeSample:
    """max_new_tokens tokens per row (fewer where a row writes a stop id, which it keeps) from a decoder
    prefilled by `kernel.start`, distributed as plain sampling from warp(p). The decoder is spent afterwards.

    draft: the model that guesses (default: the reference model's int8 copy, head rounded too)."""
    model = decoder.model
    draft = reduced_copy(model, "int8", round_head=True) if draft is None else draft
    if not eligible(decoder, draft):
        raise ValueError("speculative sampling needs a decoder started from one prompt, unhooked, full attention")
    n, dev = decoder.batch_size, decoder.logits.device
    tokens = decoder.tokens.clone()  # [N, slots]: every slot either cache holds, holes included
    mask = torch.ones_like(tokens)
    target = _Slots(model, decoder.lock_model, decoder.cache, tokens.shape[1])
    draft_cache = DynamicCache(config=draft.config)
    guesser = _Slots(draft, decoder.lock_model, draft_cache, 0)
    guesser.forward(tokens[:1], mask[:1], tokens.shape[1])  # the prompt once, broadcast like the reference's
    if n > 1:
        draft_cache.batch_repeat_interleave(n)
    stop = set(stops)
    written: list[list[int]] = [[] for _ in range(n)]
    log_p: list[list[float]] = [[] for _ in range(n)]
    ended = [False] * n
    proposed = accepted = 0

    def write(row: int, token: int, lp: float) -> None:
        written[row].append(token)
        log_p[row].append(lp)
        ended[row] = len(written[row]) >= max_new_tokens or token in stop

    first = _sample(warp.probs(decoder.logits), generator)  # the first token: plain sampling from the prefill
    first_lp = torch.log_softmax(decoder.logits.float(), dim=-1).gather(1, first[:, None]).view(-1)
    for row in range(n):
        write(row, int(first[row]), float(first_lp[row]))
    pending = first
    while not all(ended):
        left = max(max_new_tokens - len(w) for w, e in zip(written, ended) if not e)
        k = min(lookahead, left - 1)  # the chunk writes up to k+1 tokens per row
        start = tokens.shape[1]
        tokens = torch.cat([tokens, pending[:, None], torch.zeros(n, k, dtype=torch.long, device=dev)], dim=1)
        mask = torch.cat([mask, torch.ones(n, k + 1, dtype=mask.dtype, device=dev)], dim=1)
        q = torch.zeros(n, k + 1, decoder.logits.shape[-1], device=dev)  # the draft's q per guess; 0 at the bonus
        for j in range(k):  # the draft reads up to slot start+j and guesses the token of slot start+j+1
            q[:, j] = warp.probs(guesser.forward(tokens, mask, start + j + 1)[:, -1])
            tokens[:, start + j + 1] = _sample(q[:, j], generator)
        logits = target.forward(tokens, mask, start + k + 1, keep=k + 1)  # [N, k+1, V]: p after y, g_1 .. g_k
        p = warp.probs(logits)
        guesses = tokens[:, start + 1:start + k + 1]
        ratio = (p[:, :k].gather(2, guesses[..., None]) / q[:, :k].gather(2, guesses[..., None])).squeeze(-1)
        uniform = torch.rand(n, k, generator=generator).to(dev)
        kept = _accepted(ratio, uniform).long().cumprod(dim=1).sum(dim=1)  # [N] leading guesses kept
        at = kept[:, None, None].expand(n, 1, p.shape[-1])
        residual = (p.gather(1, at) - q.gather(1, at)).clamp(min=0).squeeze(1)  # q is 0 after the k guesses: p
        empty = residual.sum(-1, keepdim=True) <= 0  # p == q there: the rejection had probability 0
        pending = _sample(torch.where(empty, p.gather(1, at).squeeze(1), residual), generator)
        lp = torch.log_softmax(logits, dim=-1)
        for row in range(n):
            a = int(kept[row])
            mask[row, start + 1 + a:] = 0  # the guesses not kept become holes
            if ended[row]:
                continue
            proposed += k
            accepted += a
            for j in range(a):
                if not ended[row]:
                    write(row, int(guesses[row, j]), float(lp[row, j, guesses[row, j]]))
            if not ended[row]:
                write(row, int(pending[row]), float(lp[row, a, pending[row]]))
        if on_step is not None:
            on_step(min(len(w) for w in written) - 1)
    decoder.forward_passes += target.forward_passes
    width = max(len(w) for w in written)
    pad = min(stops) if stops else 0
    out = torch.full((n, width), pad, dtype=torch.long)
    lps = torch.zeros(n, width)
    for row in range(n):
        out[row, :len(written[row])] = torch.tensor(written[row])
        lps[row, :len(log_p[row])] = torch.tensor(log_p[row])
    stopped = torch.tensor([bool(w) and w[-1] in stop for w in written])
    decoded = Decoded(tokens=out, lengths=torch.tensor([len(w) for w in written]),
                      forward_passes=decoder.forward_passes, stopped=stopped, log_p=lps)
    return SpeculativeSample(decoded=decoded, proposed=proposed, accepted=accepted)
