"""The batched, cache-carrying decoder under every generating feature.

One `IncrementalDecoder` owns one KV cache (transformers' `DynamicCache`) for a batch of rows
(particles, candidates, policies). The prompt is prefilled once and its cache rows are broadcast
to N rows; `select(index)` makes row i a copy of row index[i] (ancestor resampling, best-of-n) or
keeps a subset (dropping finished rows), in the cache, the token buffer, the logits and the
per-row `finished` mask, so no prefix is ever recomputed. Every forward holds the model's lock.

`prefill_many` instead starts one row per prompt (many problems decoded side by side): the prompts are
left-padded to one length, and every later forward passes the attention mask and each row's own
positions, so a padded row computes what it would alone (up to floating-point summation order).

`resample="recompute"` is the slow baseline the decoding benchmark compares against: a selection
only marks the cache stale, and the next step rebuilds it from the prompt and the selected prefixes.
"""
from __future__ import annotations

import torch
from torch import nn
from transformers import DynamicCache

from backend.errors import UserError
from backend.models.locks import model_lock
from backend.models.rules import check_room, context_limit

__all__ = ["IncrementalDecoder"]
RESAMPLE_MODES = ("reorder", "recompute")


class IncrementalDecoder:
    """Feeds tokens one step at a time; `logits` is always the next-token logits `[batch, vocab]` (fp32).
    Only the last position is projected to the vocabulary (logits_to_keep=1): a 200-token prompt on Gemma's
    262k vocabulary would otherwise cost more than the rest of the forward."""

    def __init__(self, model: nn.Module, resample: str = "reorder", lock_model: nn.Module | None = None):
        if resample not in RESAMPLE_MODES:
            raise ValueError(f"resample must be one of {RESAMPLE_MODES}")
        self.model = model
        self.lock_model = model if lock_model is None else lock_model  # a reduced-precision copy locks its source
        self.resample = resample
        self.cache = DynamicCache(config=model.config)
        self.tokens: torch.Tensor | None = None  # [batch, length] prompt + generated
        self.logits: torch.Tensor | None = None
        self.finished: torch.Tensor | None = None  # [batch] bool, kept in row order by `select`
        self.prompt_length = 0
        self.forward_passes = 0
        self._stale = False  # recompute mode: the cache no longer matches `tokens`
        self.attention_mask: torch.Tensor | None = None  # [batch, length], only for left-padded prompts

    @property
    def batch_size(self) -> int:
        return 0 if self.tokens is None else self.tokens.shape[0]

    @property
    def length(self) -> int:
        return 0 if self.tokens is None else self.tokens.shape[1]

    def _forward(self, ids: torch.Tensor, keep: int = 1) -> torch.Tensor:
        """Logits after the last `keep` tokens of `ids` (the next-token logits `[batch, vocab]` when keep is 1)."""
        kwargs = {"logits_to_keep": keep}
        if self.attention_mask is not None:  # left-padded rows: the mask covers the cache and `ids`
            mask = self.attention_mask
            kwargs["attention_mask"] = mask
            kwargs["position_ids"] = (mask.cumsum(dim=1) - 1).clamp(min=0)[:, -ids.shape[1]:]
        with model_lock(self.lock_model):
            out = self.model(input_ids=ids, cache=self.cache, use_cache=True, **kwargs)
        self.forward_passes += 1
        return out.logits[:, -1, :].float() if keep == 1 else out.logits.float()

    @torch.no_grad()
    def prefill(self, prompt_ids: torch.Tensor, n: int = 1, max_new_tokens: int = 0) -> torch.Tensor:
        """Run the prompt `[1, T]` once, then broadcast its cache to n rows. Returns logits `[n, vocab]`.

        max_new_tokens: refuse up front (the context rule) when the prompt plus that many tokens would not fit.
        """
        if prompt_ids.ndim != 2 or prompt_ids.shape[0] != 1:
            raise ValueError("prefill expects a single prompt of shape [1, T]")
        if prompt_ids.shape[1] == 0:
            raise UserError("The prompt is empty.")
        check_room(self.model, prompt_ids.shape[1], max_new_tokens)
        prompt_ids = prompt_ids.to(self.model.device)
        logits = self._forward(prompt_ids)
        if n > 1:
            self.cache.batch_repeat_interleave(n)
        self.prompt_length = prompt_ids.shape[1]
        self.tokens = prompt_ids.expand(n, -1).clone()
        self.logits = logits.expand(n, -1).clone()
        self.finished = torch.zeros(n, dtype=torch.bool, device=self.logits.device)
        return self.logits

    @torch.no_grad()
    def prefill_many(self, prompts: list[torch.Tensor], max_new_tokens: int = 0, pad_id: int = 0) -> torch.Tensor:
        """One row per prompt (each `[1, T_i]`), left-padded with `pad_id` to the longest. Returns logits
        `[len(prompts), vocab]`. Refuses, before any forward, a prompt that leaves no room for max_new_tokens."""
        if not prompts:
            raise ValueError("prefill_many expects at least one prompt")
        if self.resample != "reorder":
            raise ValueError("prefill_many supports the reorder cache only")
        lengths = [int(p.shape[-1]) for p in prompts]
        if min(lengths) == 0:
            raise UserError("A prompt is empty.")
        check_room(self.model, max(lengths), max_new_tokens)
        width, device = max(lengths), self.model.device
        ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, (prompt, n) in enumerate(zip(prompts, lengths)):
            ids[row, width - n:] = prompt.view(-1)
            mask[row, width - n:] = 1
        ids = ids.to(device)
        self.attention_mask = mask.to(device)
        self.logits = self._forward(ids)
        self.prompt_length = width
        self.tokens = ids
        self.finished = torch.zeros(len(prompts), dtype=torch.bool, device=self.logits.device)
        return self.logits

    @torch.no_grad()
    def step(self, next_tokens: torch.Tensor) -> torch.Tensor:
        """Append one token per row `[batch]` and return the new next-token logits `[batch, vocab]`."""
        limit = context_limit(self.model)
        if limit is not None and self.length >= limit:
            raise UserError(f"Reached the model's context length ({limit} tokens).")
        return self.extend(next_tokens.view(-1, 1))

    @torch.no_grad()
    def extend(self, chunk: torch.Tensor) -> torch.Tensor:
        """Append several tokens per row `[batch, k]` in one forward (catching a cache up)."""
        chunk = chunk.to(self.model.device)
        if self._stale:  # recompute baseline: re-encode the prompt once, then every selected prefix plus the chunk
            prompt = self.tokens[:1, : self.prompt_length]
            generated = self.tokens[:, self.prompt_length:]
            self.cache = DynamicCache(config=self.model.config)
            self._forward(prompt)
            if self.batch_size > 1:
                self.cache.batch_repeat_interleave(self.batch_size)
            self._stale = False
            self.tokens = self.tokens[:, : self.prompt_length]
            chunk = torch.cat([generated, chunk], dim=1)
        if self.attention_mask is not None:
            self.attention_mask = torch.cat([self.attention_mask, torch.ones_like(chunk)], dim=1)
        self.logits = self._forward(chunk)
        self.tokens = torch.cat([self.tokens, chunk], dim=1)
        return self.logits

    @torch.no_grad()
    def extend_all(self, chunk: torch.Tensor) -> torch.Tensor:
        """Append `chunk` `[1, k]` in one forward and return the next-token logits after each of its tokens
        `[k, vocab]` (speculative decoding checks k guesses with one read of the weights); `logits` becomes the
        last of them. Reorder cache, one unpadded row only."""
        if self.batch_size != 1 or self.attention_mask is not None or self._stale:
            raise ValueError("extend_all checks guesses for one unpadded row")
        chunk = chunk.to(self.model.device).view(1, -1)
        logits = self._forward(chunk, keep=chunk.shape[1])[0]
        self.tokens = torch.cat([self.tokens, chunk], dim=1)
        self.logits = logits[-1:].clone()
        return logits

    def drop_last(self, n: int, logits: torch.Tensor | None = None) -> None:
        """Forget the last n tokens (rejected guesses) from the cache and the token buffer; `logits` `[1, vocab]`
        are the next-token logits after the tokens kept."""
        if n:
            self.cache.crop(-n)
            self.tokens = self.tokens[:, :-n]
        if logits is not None:
            self.logits = logits

    def select(self, index: torch.Tensor) -> None:
        """Row i becomes a copy of row index[i] (index may repeat rows or keep a subset), in the KV cache, token
        buffer, next-token logits and finished mask."""
        index = index.to(self.logits.device).long()
        if self.resample == "reorder":
            self.cache.reorder_cache(index)
        else:
            self._stale = True
        self.tokens = self.tokens.index_select(0, index)
        self.logits = self.logits.index_select(0, index)
        self.finished = self.finished.index_select(0, index)
        if self.attention_mask is not None:
            self.attention_mask = self.attention_mask.index_select(0, index)

