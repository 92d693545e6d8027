"""A prompt made ready for a look inside: its ids and token texts, with every user mistake refused in one line
before any forward (empty prompt, over the context rule, over the memory budget, a layer/head/position the model
lacks, a target that is not exactly one token)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.errors import UserError
from backend.internals.budget import check_budget
from backend.models.architecture import arch_info
from backend.models.rules import check_room


@dataclass(frozen=True)
class Encoded:
    ids: torch.Tensor  # [1, T]
    tokens: tuple[str, ...]  # each id decoded on its own

    @property
    def length(self) -> int:
        return int(self.ids.shape[1])


def token_text(tokenizer, token_id: int) -> str:
    return tokenizer.decode([int(token_id)])


def encode(model, tokenizer, prompt: str, pattern_layers: int = 0, readout: bool = False) -> Encoded:
    """The prompt's ids, refused before any forward when empty, over the context or over the memory budget of a
    traced forward keeping `pattern_layers` layers' attention probabilities (and reading every layer out)."""
    if not prompt.strip():
        raise UserError("The prompt is empty: type some text to inspect.")
    ids = tokenizer(prompt)["input_ids"]
    check_room(model, len(ids), 0, "The prompt")  # the project's one context rule
    check_budget(model, len(ids), pattern_layers, readout)
    device = next(model.parameters()).device
    return Encoded(torch.tensor([ids], device=device), tuple(token_text(tokenizer, i) for i in ids))


def position_index(position: int, length: int) -> int:
    """A 0-based index for `position` (negative counts from the end)."""
    if not -length <= position < length:
        raise UserError(f"Position {position} is outside the prompt's {length} tokens "
                        f"(use 0..{length - 1}, or -1 for the last).")
    return position % length


def check_layer(model, layer: int) -> int:
    n = arch_info(model).n_layers
    if not 0 <= layer < n:
        raise UserError(f"Layer {layer} does not exist: the model has {n} layers (0..{n - 1}).")
    return layer


def check_head(model, head: int) -> int:
    n = arch_info(model).n_heads
    if not 0 <= head < n:
        raise UserError(f"Head {head} does not exist: the model has {n} query heads per layer (0..{n - 1}).")
    return head


def single_token(tokenizer, text: str, what: str) -> int:
    """The id of `text` when it is exactly one token of this tokenizer (spaces count: " Paris" is not "Paris")."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        shown = " + ".join(repr(token_text(tokenizer, i)) for i in ids[:6]) or "nothing"
        raise UserError(f"The {what} {text!r} is {len(ids)} tokens for this model ({shown}); give exactly one token "
                        "(mind the leading space, e.g. ' Paris').")
    return int(ids[0])
