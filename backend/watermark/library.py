"""What the `transformers` watermarks (hf_kgw/, synthid/) share: their processors on the sentence loop, the
model config they are built from, and the text's ids under the model's tokenizer.

transformers applies a watermark processor after the temperature warper (generation/utils.py: "after all logits
processing"); the sentence loop divides by the temperature after its processor. `on_sentence_loop` therefore hands
the library's processor scores already divided by the temperature and multiplies its output back, so that the
loop's division gives exactly the distribution transformers would sample from: softmax(processor(scores / T)).
"""
from __future__ import annotations

from collections.abc import Callable

import torch

from backend.errors import UserError
from backend.models.loading import ModelHandle


def text_config(handle: ModelHandle):
    """The language model's own config (a multimodal config's text part), as `generate` builds processors from."""
    config = handle.model.config
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def on_sentence_loop(processor: Callable, temperature: float) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """A transformers `LogitsProcessor` `(input_ids, scores)` as the sentence loop's `(logits, ids)` processor."""
    t = max(float(temperature), 1e-4)  # the loop's own floor

    def apply(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        return processor(ids, logits / t) * t

    return apply


def text_ids(handle: ModelHandle, text: str) -> list[int]:
    """The text's token ids under the model's tokenizer (no special tokens: the marks are in the text's tokens)."""
    return handle.tokenizer(text or "", add_special_tokens=False)["input_ids"]


def needs_handle(method: str, handle) -> ModelHandle:
    if handle is None:
        raise UserError(f"{method} detection needs the language model whose tokenizer wrote the text.")
    return handle
