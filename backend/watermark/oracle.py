"""Watermarked text without a language model: IPMark's choice rule applied to a pool of existing
sentences instead of sampled candidates. Tests and benchmarks use it to build long watermarked
documents (e.g. 2,000 words) quickly; generation uses the model (backend.watermark.ipmark.embed)."""
from __future__ import annotations

from backend.watermark.corpus import human_texts
from backend.watermark.keys import model_key, user_key
from backend.watermark.scoring import MODEL, level_of, sentence_bits
from backend.watermark.segment import split_units
from backend.watermark.signatures import Signature, sign_units


def corpus_sentences() -> list[str]:
    return [u.text for text in human_texts() for u in split_units(text) if u.usable]


def watermark_bits(sigs: list[Signature], model_address: int, user_address: int) -> list[tuple[str, int, int]]:
    """(level, semantic bit, syntactic bit) of each signed sentence under this identity."""
    mk, uk = model_key(model_address), user_key(model_address, user_address)
    out = []
    for sig in sigs:
        level = level_of(mk, sig.semantic)
        out.append((level, *sentence_bits(mk if level == MODEL else uk, sig)))
    return out


def select(pool: list[str], model_address: int, user_address: int, n_bits: int = 6,
           min_tier: int = 3) -> tuple[list[str], list[str]]:
    """Split `pool` into sentences that carry the identity's bits (both 1 for tier 3) and the rest."""
    units = [u for text in pool for u in split_units(text)]
    sigs = sign_units(units, n_bits)
    chosen, rest = [], []
    for sig, (level, sem, syn) in zip(sigs, watermark_bits(sigs, model_address, user_address)):
        tier = 3 if sem and syn else 2 if sem else 1 if syn else 0
        (chosen if sig.usable and tier >= min_tier else rest).append(sig.text)
    return chosen, rest
