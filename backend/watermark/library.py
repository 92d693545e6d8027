"""What the `transformers` watermarks (hf_kgw/, synthid/) share: the model config their processors are built from,
and the text's ids under the model's tokenizer. Their processors go to the sentence loop as they are, after the
temperature (`SamplingHook.watermark_processors`), where transformers' `generate` applies a watermark ("after all
logits processing"), so the loop samples from exactly softmax(processor(scores / T))."""
from __future__ import annotations

from backend.errors import UserError
from backend.models.loading import ModelHandle


def text_config(handle: ModelHandle):
    """The language model's own config (a multimodal config's text part), as `generate` builds processors from."""
    config = handle.model.config
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def text_ids(handle: ModelHandle, text: str) -> list[int]:
    """The text's token ids under the model's tokenizer (no special tokens: the marks are in the text's tokens)."""
    return handle.tokenizer(text or "", add_special_tokens=False)["input_ids"]


def needs_handle(method: str, handle) -> ModelHandle:
    if handle is None:
        raise UserError(f"{method} detection needs the language model whose tokenizer wrote the text.")
    return handle
