"""Activation patching per (layer, head) at the last position of the corrupted prefix.

Score of head (l, h) on one example = log p(target | corrupted run with head (l, h)'s output at the
last position replaced by the mean clean output) - log p(target | corrupted run). Nats; positive =
the clean value of that head restores the answer.

Speed: the prefix up to the last token is identical for every patched run, so it is prefilled once
and its KV cache broadcast to a batch of rows; one single-token step then evaluates many heads at
once, row r patching its own head. A hook edit applies to all rows of a layer, so the per-row
replacement is written as an addition of (mean clean - own corrupted value) to that head in that
row and of exact zeros everywhere else (`patch_one` is the literal HeadEdit-replace reference the
tests compare against; they agree to float rounding).
"""
from __future__ import annotations

import numpy as np
import torch

from backend.models.hooks import HeadEdit, Hooks, capture
from backend.models.kernel import decode, start
from backend.models.rules import forward_logits
from backend.progress import Progress, silent


@torch.no_grad()
def patch_scores(model, prefix: tuple[int, ...], target: int, delta: torch.Tensor, rows_per_batch: int = 64,
                 progress: Progress = silent) -> np.ndarray:
    """delta `[layers, heads, head_dim]` = mean clean - corrupted head output at the last position.
    Returns `[layers, heads]` increases of log p(target) in nats."""
    n_layers, n_heads, head_dim = delta.shape
    device = next(model.parameters()).device
    pairs = [(layer, head) for layer in range(n_layers) for head in range(n_heads)]
    per_batch = max(1, rows_per_batch - 1)  # row 0 of every batch is the unpatched baseline
    scores = np.zeros((n_layers, n_heads), dtype=np.float64)
    ids = torch.tensor([list(prefix)], device=device)
    for first in range(0, len(pairs), per_batch):
        chunk = pairs[first:first + per_batch]
        n = len(chunk) + 1
        values = torch.zeros(n_layers, n, 1, n_heads, head_dim, device=device)
        for r, (layer, head) in enumerate(chunk, 1):
            values[layer, r, 0, head] = delta[layer, head].to(device)
        edits = [HeadEdit(layer, tuple(range(n_heads)), "add", values[layer], position=-1)
                 for layer in sorted({layer for layer, _ in chunk})]
        if ids.shape[1] > 1:
            decoder = start(model, ids[:, :-1], n=n, max_new_tokens=1)
            read: list[torch.Tensor] = []

            def feed_last(t: int, scores: torch.Tensor) -> torch.Tensor:
                read.append(scores)  # step 1 reads the patched next-token scores
                return ids[0, -1].expand(n)  # step 0 writes the prefix's last token, under the edits

            with Hooks(model, head_edits=edits):
                decode(decoder, feed_last, 2)
            logits = read[-1]
        else:  # a one-token prefix: nothing to share, run the batch directly
            with Hooks(model, head_edits=edits):
                logits = forward_logits(model, ids.expand(n, -1), logits_to_keep=1)[:, -1]
        logp = torch.log_softmax(logits.float(), dim=-1)[:, target].cpu()
        for r, (layer, head) in enumerate(chunk, 1):
            scores[layer, head] = float(logp[r] - logp[0])
        progress(min(1.0, (first + len(chunk)) / len(pairs)), f"patched {first + len(chunk)}/{len(pairs)} heads")
    return scores


@torch.no_grad()
def patch_one(model, prefix: tuple[int, ...], target: int, layer: int, head: int, value: torch.Tensor) -> float:
    """Reference: log p(target) with head (layer, head) replaced by `value [head_dim]` at the last position."""
    device = next(model.parameters()).device
    edit = HeadEdit(layer, (head,), "replace", value.to(device), position=-1)
    with Hooks(model, head_edits=[edit]):  # the last position's logits only (Gemma's vocabulary is 262k wide)
        logits = forward_logits(model, torch.tensor([list(prefix)], device=device), logits_to_keep=1)
    return float(torch.log_softmax(logits[0, -1].float(), dim=-1)[target])


@torch.no_grad()
def target_logp(model, prefix: tuple[int, ...], target: int) -> float:
    device = next(model.parameters()).device
    out = capture(model, torch.tensor([list(prefix)], device=device))
    return float(torch.log_softmax(out.logits[0, -1].float(), dim=-1)[target])
