"""hf-kgw registered as a watermark method: transformers' `WatermarkLogitsProcessor` (from `WatermarkingConfig`) on
the sentence loop, one candidate; detection by `transformers.WatermarkDetector` with the model's tokenizer. The
hashing key is a setting, not an identity: it judges any text without a registered identity."""
from __future__ import annotations

import math
import time

from backend.watermark.hf_kgw.config import HFKGWConfig
from backend.watermark.library import needs_handle, text_config
from backend.watermark.stats import LevelScore
from backend.watermark.methods import (METHODS, WATERMARKED, DetectRequest, Detection, SamplingHook, WatermarkMethod,
                                       evidence_pieces, strip_prompt)

MARKS = {1: "strong", 0: "miss", -1: "unscored"}


def sampling_hook(handle, request) -> SamplingHook:
    """A fresh processor per generation, built as `generate` builds it (text config's vocabulary, model device)."""
    processor = request.hf_kgw.watermarking_config().construct_processor(text_config(handle).vocab_size,
                                                                          handle.model.device)
    return SamplingHook(n_candidates=1, choose=None, watermark_processors=(processor,))  # as transformers has it


def level(r) -> tuple:
    """The token level as the page shows levels: WatermarkDetector's z and p (normal tail), unchanged."""
    if r.z is None:
        return ()
    g = r.config.greenlist_ratio
    return (LevelScore(level="tokens", n_sentences=r.n_tokens, n_sem=r.n_tokens, n_syn=0, score=float(r.n_green),
                       expected=g * r.n_tokens, variance=r.n_tokens * g * (1 - g), z=r.z, p_value=r.p_value,
                       log10_p=math.log10(r.p_value) if r.p_value > 0 else -math.inf),)


def detect_text(text: str, request: DetectRequest) -> Detection:
    from backend.watermark.hf_kgw.detect import detect

    handle = needs_handle("hf-kgw", request.handle)
    start = time.perf_counter()
    r = detect(handle, strip_prompt(text, request.prompt), request.config or HFKGWConfig())
    flagged = r.verdict == WATERMARKED
    z = "" if r.z is None else f"z = {r.z:.2f}, p = {r.p_value:.2g}, "
    evidence = (f"{z}{r.n_green}/{r.n_tokens} green tokens (hashing key {r.config.hashing_key}, "
                f"{r.config.seeding_scheme}) · tokenised with {handle.display_name}'s tokenizer; scores assume it")
    return Detection(method="hf-kgw", verdict=r.verdict, score=r.detection_score, z=r.z, p_value=r.p_value,
                     model_address=0, model_name="", user_address=0, user_label="", guess_model=0, guess_user=0,
                     evidence=evidence, levels=level(r),
                     pieces=evidence_pieces(((t, MARKS[g], "") for t, g in r.tokens), flagged),
                     seconds=time.perf_counter() - start, report=r, p_corrected=None, compared=1)


HF_KGW = METHODS.register(WatermarkMethod(
    name="hf-kgw", label="KGW as transformers writes it (public hashing key)",
    help="transformers' WatermarkingConfig / WatermarkLogitsProcessor (greenlist ratio, bias, hashing key, lefthash or "
    "selfhash); detection by transformers.WatermarkDetector with the model's tokenizer, no identity needed.",
    run=sampling_hook, config=HFKGWConfig, detect=detect_text, needs_model_to_detect=True))
