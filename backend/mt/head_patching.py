"""One head's patching effect on each prompt of its map, computed for that head alone (a click on a map whose
drill-downs are not prepared yet).

The map scores every head in one batched run per prompt (`backend.mt.patching.patch_scores`: a traced forward, then
per batch of 63 heads a prefill and a step of 64 rows with their logits over the whole vocabulary); a lone click
would wait for all of it. Here the same score for one head: log p(target) on the corrupted prefix with the head's
output at its last position replaced by the map's mean clean value (`patch_one`, one forward), minus the map's own
unpatched log p(target) there (`HeadMap.corrupt_logp`: the causal corrupted run's logits at that position). The
batched run's number to float rounding. Kept apart from `patching` so that the map's code, and with it the shipped
map, does not change.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from backend.mt.patching import patch_one
from backend.progress import Progress


@torch.no_grad()
def patch_head(model, head_map, prefixes: Sequence[tuple[tuple[int, ...], int]], layer: int, head: int,
                  progress: Progress) -> tuple[float, ...]:
    """Per prompt of `head_map` (`prefixes`: its corrupted prefix up to the scored position, the target token
    there), the increase of log p(target) in nats when head (layer, head) outputs the map's mean clean value."""
    value = torch.from_numpy(head_map.mean_clean[layer, head])
    scores = []
    for i, (prefix, target) in enumerate(prefixes):
        scores.append(patch_one(model, prefix, target, layer, head, value) - head_map.corrupt_logp[i])
        progress((i + 1) / len(prefixes), f"patching L{layer}.H{head} on prompt {i + 1}/{len(prefixes)}")
    return tuple(scores)
