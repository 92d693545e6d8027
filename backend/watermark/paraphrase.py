"""The language model as a paraphraser, for the lm_paraphrase attack (cached per text, the verb "watermark
paraphrase": the slowest attack)."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from backend.models.generate import encode_prompt
from backend.models.generate import generate_text
from backend.models.loading import ModelHandle
from backend.models.rules import check_room, fits
from backend.progress import Progress, silent
from backend.verbs import Verb, register

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


def compute_paraphrase(handle: ModelHandle, request: ParaphraseRequest, progress: Progress = silent) -> str:
    """The paraphrase verb's computation: the model's greedy whole-text rewrite. A request whose prompt and budget
    do not fit the model's context is refused with the context rule's message (never returned unchanged, never cut
    short)."""
    prompt_tokens, new_tokens = sizes(handle, request)
    check_room(handle.model, prompt_tokens, new_tokens, "The paraphrase request", "Paraphrase a shorter text.")
    progress(0.0, f"paraphrasing {prompt_tokens} tokens")  # where a Stop lands: the rewrite is one generation
    return generate_text(handle, _prompt(request), max_new_tokens=new_tokens, temperature=0.0).text


# Reads this whole module: the budget, the prompt and the sizes are all the paraphrase (MAX_TOKENS included,
# which a function's source names but does not hold).
paraphrase_verb = register(Verb("watermark", "paraphrase", ParaphraseRequest, compute_paraphrase,
                                "the language model's greedy rewrite of a text (the lm_paraphrase attack)",
                                reads=(sys.modules[__name__],)))


def paraphraser(handle: ModelHandle) -> Callable[[str], str]:
    """text -> the model's paraphrase, cached per text (see `compute_paraphrase`)."""

    def paraphrase(text: str) -> str:
        return paraphrase_verb(handle, ParaphraseRequest(text)).value
    return paraphrase
