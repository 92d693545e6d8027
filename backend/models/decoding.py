"""Incremental decoding over transformers' cache object, with particle-style row reordering.

One `IncrementalDecoder` owns one KV cache for a batch of sequences (particles). The prompt is
prefilled once and its cache rows are broadcast to N sequences; `reorder(index)` makes row i a
copy of row index[i] (ancestor resampling) in the cache and in the decoder's own token buffer,
so no prefix is ever recomputed.
"""
from __future__ import annotations

import torch
from torch import nn
from transformers import DynamicCache

from backend.errors import UserError
from backend.models.locks import model_lock


def context_limit(model: nn.Module) -> int | None:
    cfg = model.config
    return getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)


class IncrementalDecoder:
    """Feeds tokens one step at a time; `logits` is always the next-token logits `[batch, vocab]` (fp32).
    Only the last position is projected to the vocabulary (logits_to_keep=1): a 200-token prompt on Gemma's
    262k vocabulary would otherwise cost more than the rest of the forward."""

    def __init__(self, model: nn.Module):
        self.model = model
        self.cache = DynamicCache(config=model.config)
        self.tokens: torch.Tensor | None = None  # [batch, length] prompt + generated
        self.logits: torch.Tensor | None = None
        self.forward_passes = 0

    @property
    def batch_size(self) -> int:
        return 0 if self.tokens is None else self.tokens.shape[0]

    @property
    def length(self) -> int:
        return 0 if self.tokens is None else self.tokens.shape[1]

    @torch.no_grad()
    def prefill(self, prompt_ids: torch.Tensor, n: int = 1) -> torch.Tensor:
        """Run the prompt `[1, T]` once, then broadcast its cache to n rows. Returns logits `[n, vocab]`."""
        if prompt_ids.ndim != 2 or prompt_ids.shape[0] != 1:
            raise ValueError("prefill expects a single prompt of shape [1, T]")
        if prompt_ids.shape[1] == 0:
            raise UserError("The prompt is empty.")
        limit = context_limit(self.model)
        if limit is not None and prompt_ids.shape[1] >= limit:
            raise UserError(f"The prompt has {prompt_ids.shape[1]} tokens; the model's context is {limit}.")
        prompt_ids = prompt_ids.to(self.model.device)
        with model_lock(self.model):
            out = self.model(input_ids=prompt_ids, cache=self.cache, use_cache=True, logits_to_keep=1)
        self.forward_passes += 1
        if n > 1:
            self.cache.batch_repeat_interleave(n)
        self.tokens = prompt_ids.expand(n, -1).clone()
        self.logits = out.logits[:, -1, :].float().expand(n, -1).clone()
        return self.logits

    @torch.no_grad()
    def step(self, next_tokens: torch.Tensor) -> torch.Tensor:
        """Append one token per row `[batch]` and return the new next-token logits `[batch, vocab]`."""
        limit = context_limit(self.model)
        if limit is not None and self.length >= limit:
            raise UserError(f"Reached the model's context length ({limit} tokens).")
        next_tokens = next_tokens.to(self.model.device).view(-1, 1)
        with model_lock(self.model):
            out = self.model(input_ids=next_tokens, cache=self.cache, use_cache=True)
        self.forward_passes += 1
        self.tokens = torch.cat([self.tokens, next_tokens], dim=1)
        self.logits = out.logits[:, -1, :].float()
        return self.logits

    @torch.no_grad()
    def extend(self, chunk: torch.Tensor) -> torch.Tensor:
        """Append several tokens per row `[batch, k]` in one forward (catching a cache up)."""
        chunk = chunk.to(self.model.device)
        with model_lock(self.model):
            out = self.model(input_ids=chunk, cache=self.cache, use_cache=True, logits_to_keep=1)
        self.forward_passes += 1
        self.tokens = torch.cat([self.tokens, chunk], dim=1)
        self.logits = out.logits[:, -1, :].float()
        return self.logits

    def reorder(self, index: torch.Tensor) -> None:
        """Row i becomes a copy of row index[i], in the KV cache, token buffer and next-token logits."""
        index = index.to(self.model.device).long()
        self.cache.reorder_cache(index)
        self.tokens = self.tokens.index_select(0, index)
        self.logits = self.logits.index_select(0, index)
