"""What a strategy gets to work with: the model, the encoded prompt, stop tokens, a seeded generator."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from backend.decoding.sampler import Rollout, rollout
from backend.progress import Progress, silent


@dataclass(frozen=True)
class DecodeContext:
    """handle: a loaded `backend.models.ModelHandle`; prompt_ids `[1, T]` (chat template applied).

    `answer_of(text)` extracts an answer when the task has a checker (None otherwise); strategies
    may use it to vote, never to look at the expected answer.
    """

    handle: object
    prompt_ids: torch.Tensor
    stops: tuple[int, ...]
    generator: torch.Generator
    answer_of: Callable[[str], int | None] | None = None
    progress: Progress = silent
    prompt: str = ""  # the text prompt_ids encode (a strategy that writes new prompts from it: RC)
    chat: bool = True  # prompt_ids went through the chat template (when the tokenizer has one)
    precision: str = "reference"  # the weights decoded with (backend/models/reduced.py)

    @property
    def model(self):
        return self.handle.model

    @property
    def prompt_length(self) -> int:
        return int(self.prompt_ids.shape[1])

    def text(self, token_ids) -> str:
        return self.handle.tokenizer.decode(list(token_ids), skip_special_tokens=True)

    def answer(self, token_ids) -> int | None:
        return None if self.answer_of is None else self.answer_of(self.text(token_ids))

    def rollout(self, n: int, temperature: float, max_new_tokens: int, greedy: bool = False,
                context_ids: torch.Tensor | None = None, on_step: Callable[[int], None] | None = None) -> Rollout:
        """n sequences continuing the prompt (or `context_ids` `[1, T']`) at `temperature`."""
        ids = self.prompt_ids if context_ids is None else context_ids
        return rollout(self.model, ids, n, temperature, max_new_tokens, self.stops,
                       None if greedy else self.generator, on_step=on_step, precision=self.precision)
