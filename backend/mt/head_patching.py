"""One head's patching effect on one prompt, computed for that head alone (a click on a map that is not prepared).

The map scores every head in one batched run per prompt (`backend.mt.patching.patch_scores`): 72 heads of Gemma 3
270M cost about as much as one batch, which a lone click would wait for whole. Here the same score for one head:
log p(target) on the corrupted prefix with the head's output at its last position replaced by the map's mean clean
value, minus the unpatched run: two single-row forwards. The same number as the batched run up to float rounding
(it adds mean clean - corrupted to the corrupted value under a shared KV cache; this replaces it outright).
Kept apart from `patching` so that the map's code, and with it the shipped map, does not change.
"""
from __future__ import annotations

import torch

from backend.models.rules import forward_logits
from backend.mt.patching import patch_one


@torch.no_grad()
def patch_head(model, prefix: tuple[int, ...], target: int, layer: int, head: int, value: torch.Tensor) -> float:
    """Increase of log p(target) in nats when head (layer, head)'s output at the last position of `prefix` is
    `value [head_dim]` instead of its own."""
    device = next(model.parameters()).device
    logits = forward_logits(model, torch.tensor([list(prefix)], device=device), logits_to_keep=1)
    unpatched = float(torch.log_softmax(logits[0, -1].float(), dim=-1)[target])
    return patch_one(model, prefix, target, layer, head, value) - unpatched
