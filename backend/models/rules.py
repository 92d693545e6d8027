"""The one stop rule, the one context rule and the one locked forward every feature uses.

The context rule. A model attends over `context_limit(model)` positions; every feature asks one question,
`room(model, prompt_tokens)` (new tokens left after a prompt) or `fits(model, prompt_tokens, new_tokens)`, and
nothing else reads the limit from a config. One behaviour per kind of work, stated here once:

- interactive work (one prompt, one text, one forward a user asked for) refuses before any forward, with the
  rule's one message (`check_room`, a `UserError`: a one-line error on the page and the CLI). The kernel's
  `start`/`start_many`, `hooks.capture` and `forward_logits` ask it themselves, so a feature cannot forget;
- batch work (many problems, documents or texts) skips what does not fit and counts it: `keep_fitting` returns the
  kept items and the names of the skipped ones, the batch's Result carries them, and the page and CLI show
  `skipped_line` (a batch where nothing fits is refused);
- nothing is truncated or ended silently: a generation that stops because the context is full says so in its
  result (the watermark sentence loop's `context_full`), and a feature that reads a prefix of a document by
  design (NAG's `max_length`) reads at most `room(model, 0)` tokens and counts the documents it cut.

The stop rule. transformers has one eos rule (`GenerationConfig.eos_token_id`, a list) and chat models end a turn
with a token of their own (Llama 3 `<|eot_id|>`, Gemma `<end_of_turn>`, Qwen `<|im_end|>`) that is
not always the tokenizer's eos. A loop that stops on the tokenizer's eos alone runs past the answer,
so every feature asks `stop_ids` instead.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, TypeVar

import torch
from torch import nn

from backend.errors import UserError
from backend.models.locks import model_lock

T = TypeVar("T")
NO_LIMIT = sys.maxsize  # `room` of a model whose config names no context length
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
    """Positions the model can attend over (None: no limit in its config). The only reader of the config's
    length fields (tests/test_context_rule.py checks); features ask `room` or `fits`."""
    cfg = model.config
    return getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)


def room(model: nn.Module, prompt_tokens: int) -> int:
    """New tokens that still fit after a prompt of prompt_tokens tokens (0 when it fills the context or more;
    NO_LIMIT when the model names no limit). `room(model, 0)` is the longest input a forward may read."""
    limit = context_limit(model)
    return NO_LIMIT if limit is None else max(0, limit - prompt_tokens)


def fits(model: nn.Module, prompt_tokens: int, new_tokens: int) -> bool:
    """Whether a prompt of prompt_tokens tokens and new_tokens generated after it fit the model's context."""
    limit = context_limit(model)
    return limit is None or prompt_tokens + new_tokens <= limit


def check_room(model: nn.Module, prompt_tokens: int, new_tokens: int, what: str = "The prompt",
               advice: str = "Shorten the prompt or ask for fewer new tokens.") -> None:
    """Interactive work: refuse, before any forward, a prompt (plus new tokens) over the context, with the rule's
    one message. `what` names the input (e.g. "Line 2: the prompt"), `advice` the settings that would make it fit."""
    if prompt_tokens <= 0:
        raise UserError(f"{what} is empty.")
    if not fits(model, prompt_tokens, new_tokens):
        limit = context_limit(model)
        asked = f"; with {new_tokens} new tokens that is" if new_tokens else ", which is"
        raise UserError(f"{what} has {prompt_tokens} tokens{asked} over the model's context of {limit} tokens. "
                        f"{advice}")


@dataclass(frozen=True)
class Fitting(Generic[T]):
    """A batch under the context rule: the items kept (in order) and the names of those skipped."""

    kept: tuple[T, ...]
    skipped: tuple[str, ...]


def keep_fitting(model: nn.Module, items: Sequence[T], prompt_tokens: Callable[[T], int], new_tokens: int,
                 name: Callable[[T], str], what: str = "problem") -> Fitting[T]:
    """Batch work: keep the items whose prompt leaves room for new_tokens, name the others (the caller's Result
    carries the names, its page and CLI show `skipped_line`). Refuses a batch where nothing fits."""
    kept, skipped = [], []
    for item in items:
        (kept if fits(model, prompt_tokens(item), new_tokens) else skipped).append(item)
    if items and not kept:
        raise UserError(f"No {what} fits the model's context of {context_limit(model)} tokens with {new_tokens} "
                        f"new tokens; use shorter {what}s, fewer new tokens or a model with a longer context.")
    return Fitting(kept=tuple(kept), skipped=tuple(name(item) for item in skipped))


def skipped_line(skipped: Sequence[str], what: str = "problem", shown: int = 5) -> str:
    """The one line a page or CLI shows for a batch's skipped items ("" when none was skipped)."""
    if not skipped:
        return ""
    names = ", ".join(skipped[:shown]) + (f" and {len(skipped) - shown} more" if len(skipped) > shown else "")
    return (f"{len(skipped)} {what}{'s' if len(skipped) != 1 else ''} skipped: the prompt leaves no room for the "
            f"new tokens in the model's context ({names}).")


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
