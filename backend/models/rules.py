"""The one stop rule, the one context rule and the one locked forward every feature uses.

transformers has one eos rule (`GenerationConfig.eos_token_id`, a list) and chat models end a turn
with a token of their own (Llama 3 `<|eot_id|>`, Gemma `<end_of_turn>`, Qwen `<|im_end|>`) that is
not always the tokenizer's eos. A loop that stops on the tokenizer's eos alone runs past the answer,
so every feature asks `stop_ids` instead.
"""
from __future__ import annotations

from functools import lru_cache

import torch
from torch import nn

from backend.errors import UserError
from backend.models.locks import model_lock

_TURN_SENTINEL = "\u2063dash-end-of-turn-probe\u2063"


def _ids(value) -> set[int]:
    if isinstance(value, int):
        return {value}
    if isinstance(value, (list, tuple)):
        return {int(v) for v in value}
    return set()


def end_of_turn_ids(tokenizer) -> frozenset[int]:
    """The special token(s) the chat template writes right after an assistant message (none without a template)."""
    if not getattr(tokenizer, "chat_template", None):
        return frozenset()
    return _end_of_turn_ids(tokenizer)


@lru_cache(maxsize=32)
def _end_of_turn_ids(tokenizer) -> frozenset[int]:
    try:
        text = tokenizer.apply_chat_template([{"role": "user", "content": "q"},
                                              {"role": "assistant", "content": _TURN_SENTINEL}], tokenize=False)
    except Exception:  # a template that refuses this conversation shape (e.g. requires a system turn) names none
        return frozenset()
    if not isinstance(text, str) or _TURN_SENTINEL not in text:
        return frozenset()
    after = text.split(_TURN_SENTINEL, 1)[1]
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    specials = set(tokenizer.all_special_ids) | {i for i, t in added.items() if getattr(t, "special", False)}
    for token in tokenizer(after, add_special_tokens=False)["input_ids"]:
        if token in specials:
            return frozenset({int(token)})
        if tokenizer.decode([token]).strip():  # plain text before any special token: no end-of-turn marker
            break
    return frozenset()


def special_ids(tokenizer) -> frozenset[int]:
    """Ids of the tokenizer's special tokens: not text (a feature may suppress or categorise them; what ends a
    sequence is `stop_ids`)."""
    return frozenset(int(i) for i in tokenizer.all_special_ids if i is not None)


def stop_ids(handle) -> frozenset[int]:
    """Ids that end a generated sequence: the tokenizer's eos, every id of `generation_config.eos_token_id`,
    and the chat template's end-of-turn token."""
    return model_stop_ids(handle.model, handle.tokenizer)


def model_stop_ids(model: nn.Module, tokenizer) -> frozenset[int]:
    """`stop_ids` for a model and tokenizer not wrapped in a handle."""
    ids = _ids(tokenizer.eos_token_id)
    ids |= _ids(getattr(getattr(model, "generation_config", None), "eos_token_id", None))
    ids |= end_of_turn_ids(tokenizer)
    return frozenset(ids)


def context_limit(model: nn.Module) -> int | None:
    """Positions the model can attend over (None: no limit in its config)."""
    cfg = model.config
    return getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)


def fits(model: nn.Module, prompt_tokens: int, new_tokens: int) -> bool:
    limit = context_limit(model)
    return limit is None or prompt_tokens + new_tokens <= limit


def check_room(model: nn.Module, prompt_tokens: int, new_tokens: int, what: str = "The prompt") -> None:
    """Refuse, before any forward, a generation whose prompt plus new tokens would not fit the context."""
    if prompt_tokens <= 0:
        raise UserError(f"{what} is empty.")
    if not fits(model, prompt_tokens, new_tokens):
        limit = context_limit(model)
        raise UserError(f"{what} has {prompt_tokens} tokens; with {new_tokens} new tokens that is over the model's "
                        f"context of {limit} tokens. Shorten the prompt or ask for fewer new tokens.")


def forward_logits(model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                   logits_to_keep: int = 0) -> torch.Tensor:
    """One teacher-forced forward under the model's lock: logits `[batch, T or logits_to_keep, vocab]` (fp32).

    The lock keeps another session's hooks (an ablation, a steering vector) from acting on this forward.
    Gradients follow the caller's context (attribution methods call it under `enable_grad`).
    """
    check_room(model, input_ids.shape[1], 0)
    device = getattr(model, "device", None) or next(model.parameters()).device
    kwargs = {"input_ids": input_ids.to(device)}
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask.to(device)
    if logits_to_keep:
        kwargs["logits_to_keep"] = logits_to_keep
    with model_lock(model):
        return model(**kwargs).logits.float()
