"""The language model as a paraphraser, for the lm_paraphrase attack (cached per text: the slowest attack)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.models.generate import encode_prompt
from backend.models.generate import generate_text
from backend.models.loading import ModelHandle
from backend.models.rules import check_room, fits
from backend.store import ModelRef, cached

MAX_TOKENS = 400


@dataclass(frozen=True)
class ParaphraseRequest:
    text: str
    instruction: str = "Rewrite the following text in your own words:"


def budget(n_text: int) -> int:
    """New tokens for a paraphrase of n_text tokens: half as many again plus 16 (at most MAX_TOKENS)."""
    return min(int(n_text * 1.5) + 16, MAX_TOKENS)


def _prompt(request: ParaphraseRequest) -> str:
    return f"{request.instruction}\n\n{request.text}"


def sizes(handle: ModelHandle, request: ParaphraseRequest) -> tuple[int, int]:
    """(prompt tokens, new tokens) of a paraphrase: what the context rule is asked about."""
    n_text = len(handle.tokenizer(request.text, add_special_tokens=False)["input_ids"])
    return encode_prompt(handle, _prompt(request)).shape[1], budget(n_text)


def paraphrase_fits(handle: ModelHandle, text: str) -> bool:
    """Whether the paraphrase of text fits the model's context (batch work asks this and skips the others)."""
    return fits(handle.model, *sizes(handle, ParaphraseRequest(text)))


def paraphraser(handle: ModelHandle) -> Callable[[str], str]:
    """text -> the model's greedy whole-text rewrite. A text whose request and budget do not fit the model's
    context is refused with the context rule's message (never returned unchanged, never cut short)."""

    def compute(request: ParaphraseRequest) -> str:
        prompt_tokens, new_tokens = sizes(handle, request)
        check_room(handle.model, prompt_tokens, new_tokens, "The paraphrase request", "Paraphrase a shorter text.")
        return generate_text(handle, _prompt(request), max_new_tokens=new_tokens, temperature=0.0).text

    def paraphrase(text: str) -> str:
        request = ParaphraseRequest(text)
        return cached("watermark", "paraphrase", ModelRef.of(handle), request, lambda: compute(request)).value
    return paraphrase
