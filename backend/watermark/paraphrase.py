"""The language model as a paraphraser, for the lm_paraphrase attack (cached per text: the slowest attack)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.models.generate import encode_prompt
from backend.models.generate import generate as plain_generate
from backend.models.loading import ModelHandle
from backend.models.rules import check_room
from backend.store import ModelRef, cached

MAX_TOKENS = 400


@dataclass(frozen=True)
class ParaphraseRequest:
    text: str
    instruction: str = "Rewrite the following text in your own words:"


def budget(n_text: int) -> int:
    """New tokens for a paraphrase of n_text tokens: half as many again plus 16 (at most MAX_TOKENS)."""
    return min(int(n_text * 1.5) + 16, MAX_TOKENS)


def paraphraser(handle: ModelHandle) -> Callable[[str], str]:
    """text -> the model's greedy whole-text rewrite. A text whose request and budget do not fit the model's
    context is refused with the context rule's message (never returned unchanged, never cut short)."""

    def compute(request: ParaphraseRequest) -> str:
        prompt = f"{request.instruction}\n\n{request.text}"
        n_text = len(handle.tokenizer(request.text, add_special_tokens=False)["input_ids"])
        check_room(handle.model, encode_prompt(handle, prompt).shape[1], budget(n_text),
                   "The paraphrase request", "Paraphrase a shorter text.")
        return plain_generate(handle, prompt, max_new_tokens=budget(n_text), temperature=0.0).text

    def paraphrase(text: str) -> str:
        request = ParaphraseRequest(text)
        return cached("watermark", "paraphrase", ModelRef.of(handle), request, lambda: compute(request)).value
    return paraphrase
