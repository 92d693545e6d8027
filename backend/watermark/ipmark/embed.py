"""IPMark embedding: pick, among B sampled candidate sentences, a high-quality one whose keyed bits are 1.

Each candidate is signed (semantic LSH bits, syntactic skeleton); the level selector (from the
semantic signature under the model key) says whether it carries the model key or the model+user
key, and that key gives one bit per signature. Tiers: both bits 1, then semantic only, then
syntactic only, then any; within a tier the highest length-normalised log-likelihood wins.
Diversity rule: after `max_same_level` sentences of one level, a candidate of the other level is
taken if there is one, so both levels keep receiving evidence.
"""
from __future__ import annotations

from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.keys import model_key, user_key
from backend.watermark.sampling import Candidate, Chosen, ChosenSentence
from backend.watermark.scoring import MODEL, level_of, sentence_bits
from backend.watermark.segment import Unit, count_words
from backend.watermark.signatures import sign_units


def make_chooser(model_address: int, user_address: int, cfg: IPMarkConfig):
    mk, uk = model_key(model_address), user_key(model_address, user_address)

    def choose(candidates: list[Candidate], history: list[ChosenSentence]) -> Chosen:
        units = [Unit(text=c.text, start=0, end=len(c.text), words=count_words(c.text)) for c in candidates]
        sigs = sign_units(units, cfg.n_bits)
        info = []
        for i, (cand, sig) in enumerate(zip(candidates, sigs)):
            if not sig.usable:
                info.append((i, "", -1, -1, -1))
                continue
            level = level_of(mk, sig.semantic)
            sem, syn = sentence_bits(mk if level == MODEL else uk, sig)
            tier = 3 if sem and syn else 2 if sem else 1 if syn else 0
            info.append((i, level, sem, syn, tier))
        pool = info
        recent = [s.level for s in history[-cfg.max_same_level:]]
        if len(recent) == cfg.max_same_level and len(set(recent)) == 1 and recent[0]:
            other = [row for row in info if row[1] and row[1] != recent[0]]
            pool = other or info

        def rank(row):
            cand = candidates[row[0]]
            return (cand.valid, cand.ended != "limit", row[4], cand.quality(cfg.quality_exponent))

        i, level, sem, syn, tier = max(pool, key=rank)
        return Chosen(index=i, level=level, sem_bit=sem, syn_bit=syn, tier=tier)

    return choose

