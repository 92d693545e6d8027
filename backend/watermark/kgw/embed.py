"""KGW generation: the shared sentence loop with one candidate and the green-list logits processor."""
from __future__ import annotations

from collections.abc import Callable

from backend.models.loading import ModelHandle
from backend.progress import Progress, silent
from backend.watermark.kgw.config import KGWConfig
from backend.watermark.kgw.detect import green_lists
from backend.watermark.sampling import ChosenSentence, LoopResult, SamplingConfig, first_candidate, sentence_loop


def embed(handle: ModelHandle, prompt: str, model_address: int, cfg: KGWConfig, sampling: SamplingConfig,
          on_sentence: Callable[[ChosenSentence], None] | None = None, progress: Progress = silent) -> LoopResult:
    lists = green_lists(model_address, handle.info.vocab_size, cfg.gamma)
    return sentence_loop(handle, prompt, sampling, 1, first_candidate, processor=lists.processor(cfg.delta),
                         on_sentence=on_sentence, progress=progress)
