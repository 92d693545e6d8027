"""synthid registered as a watermark method: transformers' SynthID-Text logits processor (tournament sampling under
the keys) on the sentence loop, one candidate; detection by the g-value score with the model's tokenizer. The keys
are settings, not an identity: it judges any text without a registered identity."""
from __future__ import annotations

import math
import time

from backend.watermark.library import needs_handle, text_config
from backend.watermark.methods import (METHODS, WATERMARKED, DetectRequest, Detection, SamplingHook, WatermarkMethod,
                                       evidence_pieces, strip_prompt)
from backend.watermark.stats import LevelScore
from backend.watermark.synthid.config import SynthIDConfig


def stateless(processor):
    """The processor with its n-gram context taken from the ids on every call.

    The library's processor keeps the context in its state, appending only the newest id per call; on the sentence
    loop each sentence is a new decode whose discarded tail (the start of the next unit) it would have appended. So
    the state's context is set to the ids' last n - 1 tokens before each call (the processor appends the last one),
    the context a detector reads from the text. The state (its history of seen contexts, which skips repeated
    contexts) lives as long as the processor: one generation. One row: a new batch size starts a new state."""
    n = processor.ngram_len

    def apply(ids, scores):
        if processor.state is None or processor.state.context.shape[0] != ids.shape[0]:
            processor._init_state(ids.shape[0])
        processor.state.context = ids[:, -n:-1].to(processor.state.context)
        return processor(ids, scores)

    return apply


def sampling_hook(handle, request) -> SamplingHook:
    """A fresh processor per generation (its state is that generation's), built as `generate` builds it."""
    processor = request.synthid.watermarking_config().construct_processor(text_config(handle).vocab_size,
                                                                           handle.model.device)
    return SamplingHook(n_candidates=1, choose=None, watermark_processors=(stateless(processor),))


def _piece(text: str, ones: int, depth: int) -> tuple[str, str, str]:
    if ones < 0:
        return text, "unscored", ""
    mark = "strong" if 3 * ones >= 2 * depth else "weak" if 2 * ones > depth else "miss"
    return text, mark, f"g-values: {ones}/{depth} keys"


def level(r) -> tuple:
    t = r.test
    if t is None:
        return ()
    log10_p = math.log10(t.p_value) if t.p_value > 0 else -math.inf
    return (LevelScore(level=f"g-values ({t.name})", n_sentences=r.n_tokens, n_sem=r.n_tokens * r.depth, n_syn=0,
                       score=t.score, expected=t.expected, variance=t.std ** 2, z=t.z, p_value=t.p_value,
                       log10_p=log10_p),)


def detect_text(text: str, request: DetectRequest) -> Detection:
    from backend.watermark.synthid.detect import detect

    handle = needs_handle("synthid", request.handle)
    start = time.perf_counter()
    r = detect(handle, strip_prompt(text, request.prompt), request.config or SynthIDConfig())
    t = r.test
    flagged = r.verdict == WATERMARKED
    score = "" if t is None else f"{t.name.replace('_', ' ')} g = {t.score:.3f} (unmarked: {t.expected:.3f}), " \
                                 f"p = {t.p_value:.2g} ({t.null}), "
    evidence = (f"{score}{r.n_tokens} tokens × {r.depth} keys scored · tokenised with {handle.display_name}'s "
                "tokenizer; scores assume it")
    return Detection(method="synthid", verdict=r.verdict, score=r.detection_score, z=None if t is None else t.z,
                     p_value=None if t is None else t.p_value, model_address=0, model_name="", user_address=0,
                     user_label="", guess_model=0, guess_user=0, evidence=evidence, levels=level(r),
                     pieces=evidence_pieces((_piece(*x) for x in r.tokens), flagged),
                     seconds=time.perf_counter() - start, report=r, p_corrected=None, compared=1)


SYNTHID = METHODS.register(WatermarkMethod(
    name="synthid", label="SynthID-Text as transformers writes it (keys)",
    help="transformers' SynthIDTextWatermarkingConfig (keys, n-gram length): tournament sampling on g-values; "
         "detection by the mean g-value under the keys with its exact p-value, with the model's tokenizer, no identity "
         "needed.",
    run=sampling_hook, config=SynthIDConfig, detect=detect_text, needs_model_to_detect=True))
