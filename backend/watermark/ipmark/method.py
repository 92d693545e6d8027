"""IPMark registered as a watermark method: the sampling hook (B candidates, keyed choice) and detection
from text alone (signatures once, then the registry search; an identity given in the request is also
scored on its own, which is the evaluation's ROC statistic)."""
from __future__ import annotations

import time

from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.methods import (METHODS, WATERMARKED, DetectRequest, Detection, SamplingHook, WatermarkMethod,
                                       evidence_pieces, strip_prompt)


def sampling_hook(handle, request) -> SamplingHook:
    from backend.watermark.ipmark.embed import make_chooser

    cfg = request.ipmark
    return SamplingHook(n_candidates=cfg.n_candidates,
                        choose=make_chooser(request.model_address, request.user_address, cfg))


def detect_text(text: str, request: DetectRequest) -> Detection:
    from backend.watermark.ipmark.detect import detect_signed
    from backend.watermark.retrieval import flat
    from backend.watermark.signatures import sign_text

    cfg = request.config or IPMarkConfig()
    start = time.perf_counter()
    body = strip_prompt(text, request.prompt)
    sigs = sign_text(body, cfg.n_bits)
    report = detect_signed(sigs, cfg, request.search, signature_seconds=time.perf_counter() - start)
    score = report.detection_score
    if request.model_address:  # the tested identity's own evidence, whatever the search found
        users = {request.model_address: [request.user_address] if request.user_address else []}
        score = -flat(sigs, users, cfg.w_sem, cfg.w_syn, cfg.alpha).best.total.log10_p
    return detection_of(report, body, score)


def _mark(row) -> str:
    if not row.usable or row.sem_bit < 0:
        return "unscored"
    return {2: "strong", 1: "weak"}.get(row.sem_bit + row.syn_bit, "miss")


def detection_of(report, body: str, score: float) -> Detection:
    """The common summary of an IPMarkReport on `body` (the text the report's offsets refer to)."""
    pieces, pos = [], 0
    for r in report.sentences:
        pieces.append((body[pos:r.start], "", ""))
        pieces.append((body[r.start:r.end], _mark(r),
                       f"{r.level or 'unusable'} level · semantic {r.sem_bit} · syntactic {r.syn_bit}"))
        pos = r.end
    pieces.append((body[pos:], "", ""))
    model, user = report.model_level, report.user_level
    levels = tuple(s for s in (model, user) if s is not None)  # the levels the verdict is taken on (no total)
    return Detection(method="ipmark", verdict=report.verdict, score=score, z=None if model is None else model.z,
                     p_value=None if model is None else model.p_value, model_address=report.model_address,
                     model_name=report.model_name, user_address=report.user_address, user_label=report.user_label,
                     guess_model=report.top_models[0][0] if report.top_models else 0,
                     guess_user=report.guess_user_address,
                     evidence=f"{report.n_usable} usable of {report.n_sentences} sentences", levels=levels,
                     pieces=evidence_pieces((p for p in pieces if p[0]), report.verdict == WATERMARKED),
                     units=report.sentences, keys_evaluated=report.keys_evaluated,
                     seconds=report.signature_seconds + report.retrieval_seconds, report=report,
                     p_corrected=None if model is None else report.p_decision,
                     compared=1 if model is None else model.compared,
                     corrected_over="" if model is None else model.corrected_over)


IPMARK = METHODS.register(WatermarkMethod(
    name="ipmark", label="IPMark (sentence level, model + user)",
    help="Chooses among B sampled candidate sentences by two keyed bits (semantic LSH signature and function-word "
    "skeleton); detection from text alone, with hierarchical identity retrieval.",
    run=sampling_hook, config=IPMarkConfig, detect=detect_text, identifies_users=True,
    sentences_to_flag=40))  # one bit pair a sentence: flagged in 0.99 of texts at 40 sentences, B = 8 (RESULTS)
