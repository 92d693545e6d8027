"""Small shared pieces for the decoding tests (tiny models only)."""
from __future__ import annotations

import torch

from backend.models.generate import encode_prompt


def prompt_ids(handle, text: str = "Tom has 3 apples.") -> torch.Tensor:
    return encode_prompt(handle, text)


@torch.no_grad()
def full_log_probs(handle, ids: torch.Tensor) -> torch.Tensor:
    """log p(next | prefix) at every position of `ids` `[B, L]` from one uncached forward: `[B, L, V]`."""
    return torch.log_softmax(handle.model(input_ids=ids).logits.float(), dim=-1)


def sequence_log_prob(handle, prompt: torch.Tensor, tokens: list[int], temperature: float = 1.0) -> float:
    """Sum over `tokens` of log softmax(logits / temperature), by brute force (no cache)."""
    ids = torch.cat([prompt, torch.tensor([tokens])], dim=1)
    with torch.no_grad():
        logits = handle.model(input_ids=ids).logits.float()[0]
    lp = torch.log_softmax(logits / temperature, dim=-1)
    start = prompt.shape[1]
    return float(sum(lp[start - 1 + i, tok] for i, tok in enumerate(tokens)))
