"""KGW detection: tokenise with the model's tokenizer, count green tokens (each token's green list is
seeded by the token before it; the first token has no predecessor and is not scored), one-sided z
and exact binomial p-value. Needs the tokenizer, not the weights' forward pass."""
from __future__ import annotations

from dataclasses import dataclass

from backend.models.loading import ModelHandle
from backend.watermark.keys import kgw_key
from backend.watermark.kgw.config import KGWConfig
from backend.watermark.kgw.greenlist import GreenLists
from backend.watermark.methods import CLEAN, TOO_SHORT, WATERMARKED
from backend.watermark.stats import LevelScore, binomial_score


@dataclass(frozen=True)
class KGWReport:
    verdict: str  # WATERMARKED | CLEAN | TOO_SHORT
    model_address: int
    score: LevelScore
    n_tokens: int
    n_green: int
    tokens: tuple[tuple[str, int], ...]  # (token text, 1 green / 0 red / -1 not scored)

    @property
    def detection_score(self) -> float:
        return self.score.z

    def summary(self) -> dict:
        return {"verdict": self.verdict, "model": self.model_address, "z": round(self.score.z, 3),
                "p_value": self.score.p_value, "tokens_scored": self.n_tokens, "green": self.n_green}

    def to_json(self) -> dict:
        return {**self.summary(), "tokens": [[t, g] for t, g in self.tokens]}


_lists: dict[tuple, GreenLists] = {}


def green_lists(model_address: int, vocab_size: int, gamma: float) -> GreenLists:
    key = kgw_key(model_address)
    cache_key = (key, vocab_size, gamma)
    if cache_key not in _lists:
        _lists[cache_key] = GreenLists(key, vocab_size, gamma)
    return _lists[cache_key]


def detect(handle: ModelHandle, text: str, model_address: int, cfg: KGWConfig = KGWConfig()) -> KGWReport:
    tok = handle.tokenizer
    ids = tok(text or "", add_special_tokens=False)["input_ids"]
    lists = green_lists(model_address, handle.info.vocab_size, cfg.gamma)
    marks, green = [-1], 0
    for prev, cur in zip(ids, ids[1:]):
        is_green = int(cur < lists.vocab_size and bool(lists.mask(prev)[cur]))
        marks.append(is_green)
        green += is_green
    n = max(len(ids) - 1, 0)
    score = binomial_score("tokens", green, n, cfg.gamma)
    if n < cfg.min_tokens:
        verdict = TOO_SHORT
    else:
        verdict = WATERMARKED if score.z >= cfg.z_threshold else CLEAN
    pieces = tuple((tok.decode([t]), m) for t, m in zip(ids, marks)) if ids else ()
    return KGWReport(verdict=verdict, model_address=model_address, score=score, n_tokens=n, n_green=green,
                     tokens=pieces)
