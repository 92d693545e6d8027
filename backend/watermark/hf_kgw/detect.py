"""hf-kgw detection: `transformers.WatermarkDetector` on the text's ids under the model's tokenizer, and the same
green lists per token for the highlight.

Detection reads the text alone (no prompt, no registered identity): the ids are the text's tokens, the
detector drops a leading BOS and scores every token after the first `context_width` (selfhash: every token from
index context_width - 1), z = (green - gamma n) / sqrt(n gamma (1 - gamma)), p from the normal tail, exactly
as the library does; the verdict is its prediction (z > z_threshold) once at least `min_tokens` are scored.
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from backend.models.loading import ModelHandle
from backend.watermark.hf_kgw.config import HFKGWConfig
from backend.watermark.library import text_config, text_ids
from backend.watermark.methods import CLEAN, TOO_SHORT, WATERMARKED


@dataclass(frozen=True)
class HFKGWReport:
    verdict: str
    z: float | None  # None when no token could be scored
    p_value: float | None
    prediction: bool  # WatermarkDetector's own prediction at z_threshold
    n_tokens: int  # tokens scored
    n_green: int
    tokens: tuple[tuple[str, int], ...]  # (token text, 1 green / 0 red / -1 not scored), in order
    config: HFKGWConfig

    @property
    def detection_score(self) -> float:
        return 0.0 if self.z is None else self.z

    def summary(self) -> dict:
        c = self.config
        return {"z": None if self.z is None else round(self.z, 4), "p_value": self.p_value,
                "tokens_scored": self.n_tokens, "green": self.n_green, "prediction": self.prediction,
                "settings": {"greenlist_ratio": c.greenlist_ratio, "bias": c.bias, "hashing_key": c.hashing_key,
                             "seeding_scheme": c.seeding_scheme, "context_width": c.context_width,
                             "z_threshold": c.z_threshold}}

    def to_json(self) -> dict:
        return {**self.summary(), "tokens": [[t, g] for t, g in self.tokens]}


_KEPT_DETECTORS = 4  # each holds the processor's table of a million int64s (8 MB)
_detectors: OrderedDict[tuple, tuple[object, threading.Lock]] = OrderedDict()
_detectors_lock = threading.Lock()


@contextmanager
def detector_for(handle: ModelHandle, cfg: HFKGWConfig):
    """transformers' detector with the settings the text was written with (device: the model's, as at generation),
    held for the caller's use.

    One is kept per (vocabulary, BOS, device, settings), the last few used: building one draws a permutation of a
    million entries (about 30 ms, most of a short text's detection, paid again for every text of an evaluation or a
    corpus scan). Its processor reseeds one shared generator per token, so one caller uses it at a time."""
    from transformers import WatermarkDetector

    config = text_config(handle)
    device = str(handle.model.device)
    watermarking = cfg.watermarking_config()
    key = (config.vocab_size, config.bos_token_id, device, json.dumps(watermarking.to_dict(), sort_keys=True))
    with _detectors_lock:
        kept = _detectors.pop(key, None)
        if kept is None:
            kept = (WatermarkDetector(model_config=config, device=device, watermarking_config=watermarking),
                    threading.Lock())
        _detectors[key] = kept  # the most recently used last
        while len(_detectors) > _KEPT_DETECTORS:
            _detectors.popitem(last=False)
    detector, in_use = kept
    with in_use:
        yield detector


def green_marks(detector, ids: torch.Tensor) -> list[int]:
    """Per token of `ids` [L] (after the detector's BOS strip): 1 green, 0 red, -1 not scored, from the detector's
    own green lists (the windows WatermarkDetector scores: n = context_width + 1 - selfhash tokens each)."""
    processor = detector.processor
    selfhash = int(processor.seeding_scheme == "selfhash")
    n = processor.context_width + 1 - selfhash
    marks = [-1] * min(n - 1, len(ids))
    for end in range(n - 1, len(ids)):
        window = ids[end - n + 1:end + 1]
        prefix = window if selfhash else window[:-1]
        marks.append(int(bool(detector._get_ngram_score_cached(prefix, int(window[-1])))))
    return marks


def detect(handle: ModelHandle, text: str, cfg: HFKGWConfig = HFKGWConfig()) -> HFKGWReport:
    ids = text_ids(handle, text)
    tensor = torch.tensor([ids], dtype=torch.long, device=handle.model.device)
    with detector_for(handle, cfg) as detector:
        bos = detector.bos_token_id is not None and bool(ids) and ids[0] == detector.bos_token_id
        body = tensor[0, 1:] if bos else tensor[0]
        marks = ([-1] if bos else []) + green_marks(detector, body)
        scorable = len(body) - detector.processor.context_width >= 1  # what the detector itself requires
        if scorable:
            out = detector(tensor, z_threshold=cfg.z_threshold, return_dict=True)
            z, p = float(out.z_score[0]), float(out.p_value[0])
            n, green, prediction = (int(out.num_tokens_scored[0]), int(out.num_green_tokens[0]),
                                    bool(out.prediction[0]))
        else:
            z, p, n, green, prediction = None, None, 0, 0, False
    if n < max(cfg.min_tokens, 1):
        verdict = TOO_SHORT
    else:
        verdict = WATERMARKED if prediction else CLEAN
    pieces = tuple((handle.tokenizer.decode([t]), m) for t, m in zip(ids, marks))
    return HFKGWReport(verdict=verdict, z=z, p_value=p, prediction=prediction, n_tokens=n, n_green=green,
                       tokens=pieces, config=cfg)
