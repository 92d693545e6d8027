"""Attacks on watermarked text: one Registry of named variants (`run(text, rate, ctx) -> text`), each
with a default strength.

- word_deletion(rate): each word is deleted with probability `rate`.
- synonym_substitution(rate): `rate` of all words are replaced by a synonym from a hand-written
  dictionary of ~250 content words (only words that have an entry can change, so the effective rate is
  capped by the dictionary's coverage; the realised rate is reported).
- copy_paste(rate): the watermarked sentences are mixed into unwatermarked text so that a `rate`
  fraction of the sentences come from the other text (IPMark's "copy-paste").
- sentence_shuffle: the sentences in random order.
- sentence_truncation(rate): the last `rate` fraction of the sentences are cut.
- sentence_deletion(rate): each sentence is deleted with probability `rate`.
- lm_paraphrase: the whole text rewritten by the language model (greedy decoding).
"""
from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from backend.errors import UserError
from backend.variants import Registry, Variant
from backend.watermark.corpus import DATA
from backend.watermark.segment import split_units

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*", re.UNICODE)


@dataclass(frozen=True)
class AttackContext:
    seed: int = 0
    other_text: str = ""  # unwatermarked text for copy_paste
    paraphrase: Callable[[str], str] | None = None  # text -> paraphrase (lm_paraphrase; see paraphrase.py)


@dataclass(frozen=True)
class Attack(Variant):
    """run(text, rate, ctx) -> attacked text."""

    default_rate: float = 0.0
    needs_model: bool = False  # the caller puts the language model's paraphraser in the context


ATTACKS: Registry[Attack] = Registry("watermark-attacks", "attack")


@lru_cache(maxsize=1)
def synonyms() -> dict[str, tuple[str, ...]]:
    table = {}
    for line in (DATA / "synonyms.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or ":" not in line:
            continue
        word, alts = line.split(":", 1)
        table[word.strip().lower()] = tuple(a.strip() for a in alts.split(",") if a.strip())
    return table


def _match_case(original: str, replacement: str) -> str:
    if original.isupper() and len(original) > 1:
        return replacement.upper()
    return replacement.capitalize() if original[:1].isupper() else replacement


def word_deletion(text: str, rate: float, ctx: AttackContext) -> str:
    rng = random.Random(ctx.seed)
    out = _WORD.sub(lambda m: "" if rng.random() < rate else m.group(), text)
    return re.sub(r"[ \t]{2,}", " ", re.sub(r" +([,.;:!?])", r"\1", out))


def synonym_substitution(text: str, rate: float, ctx: AttackContext) -> str:
    rng = random.Random(ctx.seed)
    table = synonyms()
    words = list(_WORD.finditer(text))
    eligible = [m for m in words if m.group().lower() in table]
    n_change = min(len(eligible), round(rate * len(words)))
    chosen = {m.start() for m in rng.sample(eligible, n_change)} if n_change else set()
    return _WORD.sub(lambda m: _match_case(m.group(), rng.choice(table[m.group().lower()]))
                     if m.start() in chosen else m.group(), text)


def _sentences(text: str) -> list[str]:
    return [u.text for u in split_units(text)]


def copy_paste(text: str, rate: float, ctx: AttackContext) -> str:
    """Keep the watermarked sentences as one block inside other text making up `rate` of all sentences."""
    mine, other = _sentences(text), _sentences(ctx.other_text)
    if not other or rate <= 0:
        return text
    n_other = min(len(other), round(len(mine) * rate / max(1e-9, 1 - rate))) if rate < 1 else len(other)
    rng = random.Random(ctx.seed)
    at = rng.randint(0, n_other)
    return " ".join(other[:at] + mine + other[at:n_other])


def sentence_shuffle(text: str, rate: float, ctx: AttackContext) -> str:
    parts = _sentences(text)
    random.Random(ctx.seed).shuffle(parts)
    return " ".join(parts)


def sentence_truncation(text: str, rate: float, ctx: AttackContext) -> str:
    parts = _sentences(text)
    return " ".join(parts[:max(1, round(len(parts) * (1 - rate)))])


def sentence_deletion(text: str, rate: float, ctx: AttackContext) -> str:
    rng = random.Random(ctx.seed)
    parts = _sentences(text)
    kept = [p for p in parts if rng.random() >= rate]
    return " ".join(kept or parts[:1])


def lm_paraphrase(text: str, rate: float, ctx: AttackContext) -> str:
    if ctx.paraphrase is None:
        raise UserError("The paraphrase attack needs a language model.")
    return ctx.paraphrase(text)


for _attack in (
    Attack(name="word_deletion", label="Word deletion", help="Delete each word with probability rate",
           run=word_deletion, default_rate=0.1),
    Attack(name="synonym_substitution", label="Synonym substitution",
           help="Replace rate of the words by dictionary synonyms", run=synonym_substitution, default_rate=0.1),
    Attack(name="copy_paste", label="Copy-paste", help="Dilute: rate of the sentences come from unwatermarked text",
           run=copy_paste, default_rate=0.5),
    Attack(name="sentence_shuffle", label="Sentence shuffle", help="Shuffle the sentences", run=sentence_shuffle,
           default_rate=1.0),
    Attack(name="sentence_truncation", label="Sentence truncation", help="Cut the last rate of the sentences",
           run=sentence_truncation, default_rate=0.5),
    Attack(name="sentence_deletion", label="Sentence deletion", help="Delete each sentence with probability rate",
           run=sentence_deletion, default_rate=0.3),
    Attack(name="lm_paraphrase", label="LM paraphrase", help="Rewrite the text with the language model",
           run=lm_paraphrase, default_rate=1.0, needs_model=True),
):
    ATTACKS.register(_attack)


def changed_share(before: str, after: str) -> float:
    """The attack's effect: share of words (of the longer text) not kept in order; 0 when untouched."""
    old, new = before.split(), after.split()
    if not old and not new:
        return 0.0
    kept = sum(b.size for b in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_matching_blocks())
    return 1 - kept / max(len(old), len(new))


def apply_attack(name: str, text: str, rate: float | None = None, ctx: AttackContext = AttackContext()) -> str:
    attack = ATTACKS.get(name)
    rate = attack.default_rate if rate is None else float(rate)
    if not 0 <= rate <= 1:
        raise UserError("The attack rate must be between 0 and 1.")
    return attack.run(text or "", rate, ctx)
