"""KGW registered as a watermark method: one candidate with the green-list logits processor; detection
tests one model identity's key with the model's tokenizer (K = 1 key: its p-value needs no correction)."""
from __future__ import annotations

from backend.errors import UserError
from backend.watermark.kgw.config import KGWConfig
from backend.watermark.keys import is_demo
from backend.watermark.methods import (METHODS, WATERMARKED, DetectRequest, Detection, SamplingHook, WatermarkMethod,
                                       evidence_pieces, strip_prompt)

MARKS = {1: "strong", 0: "miss", -1: "unscored"}


def sampling_hook(handle, request) -> SamplingHook:
    from backend.watermark.kgw.detect import green_lists

    cfg = request.kgw
    lists = green_lists(request.model_address, handle.info.vocab_size, cfg.gamma)
    return SamplingHook(n_candidates=1, choose=None, logits_processors=(lists.processor(cfg.delta),))


def detect_text(text: str, request: DetectRequest) -> Detection:
    from backend.watermark.kgw.detect import detect

    if request.handle is None:
        raise UserError("KGW detection needs the language model whose tokenizer wrote the text.")
    if not request.model_address:
        raise UserError("KGW detection needs the model identity whose key to test.")
    r = detect(request.handle, strip_prompt(text, request.prompt), request.model_address,
               request.config or KGWConfig())
    found = r.model_address if r.verdict == WATERMARKED else 0
    evidence = (f"z = {r.score.z:.2f}, p = {r.score.p_value:.2g}, {r.n_green}/{r.n_tokens} green tokens · "
                f"tokenizer of {request.handle.display_name}"
                + (" · demo identity: its key is public, anyone can write this mark" if is_demo(r.model_address) else ""))
    return Detection(method="kgw", verdict=r.verdict, score=r.detection_score, z=r.score.z, p_value=r.score.p_value,
                     model_address=found, model_name="", user_address=0, user_label="", guess_model=r.model_address,
                     guess_user=0, evidence=evidence, levels=(r.score,),
                     pieces=evidence_pieces(((t, MARKS[g], "") for t, g in r.tokens), r.verdict == WATERMARKED),
                     report=r, p_corrected=None, compared=1)  # one key tested: the raw p is the p


KGW = METHODS.register(WatermarkMethod(
    name="kgw", label="KGW (token level, model)",
    help="Adds delta to a gamma fraction of the vocabulary (green list seeded by the previous token); detection "
    "needs the model's tokenizer.",
    run=sampling_hook, config=KGWConfig, detect=detect_text, needs_model_to_detect=True,
    needs_identity_to_detect=True))
