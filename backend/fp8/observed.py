"""Observed attention logits S_ij = scaling * q_i . k_j on sample texts.

The residual stream entering each layer comes from the shared `trace`; queries and keys are
recomputed from it by the model's own modules (input norm, projections, QK-norm, rotary) through
`attention_qk_states`, so they are exactly what the attention kernel sees. Keys stay per kv head:
each group of query heads is scored against its shared key slice (no expansion). Only causal pairs
(j <= i) count, as those are the logits attention uses.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from backend.errors import UserError
from backend.fp8.samples import SAMPLE_TEXTS
from backend.models.architecture import arch_info, attention_qk_states, attention_qk_weights, attention_window
from backend.models.hooks import capture
from backend.models.rules import check_room
from backend.progress import Progress, silent


@dataclass(frozen=True)
class ObservedScores:
    """max_abs `[layers, heads]`: max |S_ij| over causal pairs of all sample texts (logit units)."""

    max_abs: np.ndarray
    n_texts: int
    n_tokens: int


def check_max_tokens(model: nn.Module, max_tokens: int) -> None:
    """max_tokens is bounded above by the context rule: a sample text is read in one forward, so at most the
    model's context (refused before any work, with the rule's message)."""
    if max_tokens < 2:
        raise UserError("Sample texts need at least 2 tokens.")
    check_room(model, max_tokens, 0, "A sample text of max_tokens", "Lower max_tokens (tokens per sample text).")


def encode_samples(model: nn.Module, tokenizer, n_texts: int, max_tokens: int) -> list[torch.Tensor]:
    """The first `n_texts` sample texts as `[1, T]` id tensors, T <= max_tokens (itself within the context)."""
    if not 1 <= n_texts <= len(SAMPLE_TEXTS):
        raise UserError(f"Number of sample texts must be between 1 and {len(SAMPLE_TEXTS)}.")
    check_max_tokens(model, max_tokens)
    return [torch.tensor([tokenizer(text)["input_ids"][:max_tokens]]) for text in SAMPLE_TEXTS[:n_texts]]


def computed_pairs(model: nn.Module, layer: int, seq: int, device=None) -> torch.Tensor:
    """`[seq, seq]` bool: the (query, key) pairs a layer computes: causal, and within its sliding window if any."""
    pairs = torch.ones(seq, seq, dtype=torch.bool, device=device).tril()
    window = attention_window(model, layer)
    return pairs if window is None else pairs & ~torch.ones_like(pairs).tril(-window)


def layer_logits(model: nn.Module, layer: int, residual: torch.Tensor) -> torch.Tensor:
    """Attention logits `[batch, heads, seq, seq]` of one layer from its input `[batch, seq, hidden]`,
    entries the layer never computes (non-causal, or outside a sliding window) set to 0."""
    info = arch_info(model)
    q, k = attention_qk_states(model, layer, residual)
    batch, _, seq, r = q.shape
    q = q.reshape(batch, info.n_kv_heads, info.group_size, seq, r)
    scores = torch.einsum("bkgir,bkjr->bkgij", q, k) * attention_qk_weights(model, layer).scaling
    return scores.masked_fill(~computed_pairs(model, layer, seq, scores.device), 0.0).reshape(batch, info.n_heads, seq, seq)


@torch.no_grad()
def observe(model: nn.Module, tokenizer, n_texts: int, max_tokens: int, progress: Progress = silent
            ) -> ObservedScores:
    info = arch_info(model)
    out = np.zeros((info.n_layers, info.n_heads), dtype=np.float32)
    samples = encode_samples(model, tokenizer, n_texts, max_tokens)
    for t, ids in enumerate(samples):
        progress(t / len(samples), f"scores on sample text {t + 1}/{len(samples)}")
        residual = capture(model, ids.to(next(model.parameters()).device)).residual
        for layer in range(info.n_layers):
            s = layer_logits(model, layer, residual[layer]).abs().amax(dim=(0, 2, 3))
            out[layer] = np.maximum(out[layer], s.float().cpu().numpy())
    progress(1.0, "observed scores done")
    return ObservedScores(max_abs=out, n_texts=len(samples), n_tokens=int(sum(ids.shape[1] for ids in samples)))


@torch.no_grad()
def layer_score_samples(model: nn.Module, tokenizer, layer: int, n_texts: int, max_tokens: int
                        ) -> list[np.ndarray]:
    """Per sample text, the causal logits of one layer, flattened (heads x causal pairs), fp32."""
    info = arch_info(model)
    if not -info.n_layers <= layer < info.n_layers:
        raise UserError(f"Layer {layer} is out of range (the model has {info.n_layers} layers).")
    out = []
    for ids in encode_samples(model, tokenizer, n_texts, max_tokens):
        residual = capture(model, ids.to(next(model.parameters()).device)).residual
        scores = layer_logits(model, layer % info.n_layers, residual[layer % info.n_layers])[0]
        pairs = computed_pairs(model, layer % info.n_layers, scores.shape[-1], scores.device)
        out.append(scores[:, pairs].reshape(-1).float().cpu().numpy())
    return out
