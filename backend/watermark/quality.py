"""Text quality: perplexity of a response under the generating model, conditioned on its prompt."""
from __future__ import annotations

import math

import torch

from backend.models.generate import encode_prompt
from backend.models.loading import ModelHandle
from backend.models.rules import forward_logits


@torch.no_grad()
def perplexity(handle: ModelHandle, prompt: str, response: str, chat: bool = True) -> float:
    """exp(mean negative log-likelihood of the response tokens); nan for an empty response."""
    response_ids = handle.tokenizer(response, add_special_tokens=False)["input_ids"]
    if not response_ids:
        return float("nan")
    prompt_ids = encode_prompt(handle, prompt, chat=chat)
    ids = torch.cat([prompt_ids, torch.tensor([response_ids], dtype=prompt_ids.dtype)], dim=1)
    logits = forward_logits(handle.model, ids)[0, :-1]  # under the model's lock; refuses a text over the context
    ids = ids.to(logits.device)
    targets = ids[0, 1:]
    nll = torch.nn.functional.cross_entropy(logits, targets, reduction="none")
    start = prompt_ids.shape[1] - 1  # first prediction of a response token
    scored = nll[start:]
    return float(math.exp(scored.mean().item())) if scored.numel() else float("nan")
