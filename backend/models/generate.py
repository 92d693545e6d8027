"""Plain greedy or sampled text generation on the incremental decoder (the smallest end-to-end use of a model)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.errors import UserError
from backend.models.kernel import decode, greedy_policy, sampling_policy, start
from backend.models.loading import ModelHandle
from backend.models.rules import stop_ids
from backend.models.speculative_sampling import Warp, eligible, sample_in_chunks

MAX_NEW_TOKENS = 4096  # a plain generation; more is minutes of CPU for no view of the app


def encode_prompt(handle: ModelHandle, prompt: str, chat: bool = True) -> torch.Tensor:
    """Token ids `[1, T]`; chat models get their chat template with a generation prompt."""
    if not prompt.strip():
        raise UserError("The prompt is empty.")
    tok = handle.tokenizer
    if chat and tok.chat_template:
        ids = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                      return_tensors="pt", return_dict=True)["input_ids"]
    else:
        ids = tok(prompt, return_tensors="pt")["input_ids"]
    return ids


@dataclass(frozen=True)
class Generation:
    prompt: str
    text: str
    token_ids: tuple[int, ...]
    forward_passes: int


@torch.no_grad()
def generate_text(handle: ModelHandle, prompt: str, max_new_tokens: int = 64, temperature: float = 0.0,
                  seed: int = 0, chat: bool = True, speculative: bool = False) -> Generation:
    """Greedy (temperature 0) or ancestral sampling at `temperature`, stopping at the model's stop ids.

    speculative: sample in checked chunks (backend/models/speculative_sampling.py: the same distribution, other
    tokens for a seed), where the model allows it."""
    if not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise UserError(f"max_new_tokens must be between 1 and {MAX_NEW_TOKENS}, got {max_new_tokens}.")
    if not 0 <= temperature <= 10:  # also refuses NaN
        raise UserError(f"temperature must be between 0 (greedy) and 10, got {temperature}.")
    generator = torch.Generator().manual_seed(seed)
    policy = greedy_policy if temperature == 0 else sampling_policy(temperature, generator)
    stops = stop_ids(handle)
    decoder = start(handle.model, encode_prompt(handle, prompt, chat), max_new_tokens=max_new_tokens)
    if speculative and temperature > 0 and eligible(decoder):
        out = sample_in_chunks(decoder, max_new_tokens, generator, Warp(temperature), stops).decoded
    else:
        out = decode(decoder, policy, max_new_tokens, stops, speculate=True)  # greedy: checked chunks, same tokens
    new = out.row(0, keep_stop=False)
    text = handle.tokenizer.decode(new, skip_special_tokens=True)
    return Generation(prompt=prompt, text=text, token_ids=tuple(new), forward_passes=out.forward_passes)
