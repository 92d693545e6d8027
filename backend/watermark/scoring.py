"""Keyed bits, the level selector and per-level scores of one identity over signed sentences.

bit(key, channel, signature) = last byte of HMAC-SHA256(key, "<channel>|<signature>") & 1.
level(model key, semantic signature) = "model" if the low nibble of HMAC(model key, "level|sig") is
below 8 else "user": about half the sentences carry the model key, the rest the model+user key.
Within one level a repeated message (same channel and signature) is counted once, so the counted
bits stay independent fair coins under H0 and the p-values in stats.py are exact.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.watermark.keys import Key
from backend.watermark.signatures import Signature

MODEL, USER = "model", "user"


def keyed_bit(key: Key, channel: str, signature: str) -> int:
    return key.mac(f"{channel}|{signature}".encode("utf-8"))[-1] & 1


def level_of(model_key: Key, semantic: str) -> str:
    return MODEL if (model_key.mac(f"level|{semantic}".encode("utf-8"))[-1] & 0x0F) < 8 else USER


def sentence_bits(key: Key, sig: Signature) -> tuple[int, int]:
    return keyed_bit(key, "sem", sig.semantic), keyed_bit(key, "syn", sig.syntactic)


@dataclass(frozen=True)
class LevelMessages:
    """The distinct messages of one level, ready to be scored under many keys (hierarchical search)."""

    level: str
    sentence_ids: tuple[int, ...]  # usable sentences assigned to this level
    sem: tuple[bytes, ...]  # distinct "sem|<sig>" messages
    syn: tuple[bytes, ...]


@dataclass(frozen=True)
class Prepared:
    """The HMAC inputs of a text's usable sentences, encoded once and reused for every key."""

    ids: tuple[int, ...]
    level: tuple[bytes, ...]  # "level|<semantic>"
    sem: tuple[bytes, ...]  # "sem|<semantic>"
    syn: tuple[bytes, ...]  # "syn|<syntactic>"


def prepare(sigs: list[Signature]) -> Prepared:
    ids = tuple(i for i, s in enumerate(sigs) if s.usable)
    return Prepared(ids=ids, level=tuple(f"level|{sigs[i].semantic}".encode() for i in ids),
                    sem=tuple(f"sem|{sigs[i].semantic}".encode() for i in ids),
                    syn=tuple(f"syn|{sigs[i].syntactic}".encode() for i in ids))


def level_messages(sigs: list[Signature] | Prepared, model_key: Key) -> dict[str, LevelMessages]:
    """Split usable sentences by level (under this model's key) and deduplicate their messages."""
    prep = sigs if isinstance(sigs, Prepared) else prepare(sigs)
    is_model = [(model_key.mac(m)[-1] & 0x0F) < 8 for m in prep.level]  # the same rule as level_of
    out = {}
    for level, flag in ((MODEL, True), (USER, False)):
        picked = [k for k, f in enumerate(is_model) if f == flag]
        out[level] = LevelMessages(level=level, sentence_ids=tuple(prep.ids[k] for k in picked),
                                   sem=tuple(dict.fromkeys(prep.sem[k] for k in picked)),
                                   syn=tuple(dict.fromkeys(prep.syn[k] for k in picked)))
    return out


def bits_of(key: Key, messages: LevelMessages) -> tuple[list[int], list[int]]:
    return [key.mac(m)[-1] & 1 for m in messages.sem], [key.mac(m)[-1] & 1 for m in messages.syn]


@dataclass(frozen=True)
class SentenceRow:
    """One sentence of a detection report (under the attributed or best-guess identity)."""

    index: int
    text: str
    start: int
    end: int
    usable: bool
    level: str  # "model" | "user" | "" (unusable)
    sem_bit: int  # -1 when unusable
    syn_bit: int
    contribution: float  # w_sem*sem_bit + w_syn*syn_bit of the counted bits (0 for repeats)
    repeated: bool  # its messages were already counted earlier in this level


def sentence_rows(sigs: list[Signature], model_key: Key, user_key: Key | None, w_sem: float,
                  w_syn: float) -> list[SentenceRow]:
    rows, seen = [], set()
    for i, sig in enumerate(sigs):
        if not sig.usable:
            rows.append(SentenceRow(index=i, text=sig.text, start=sig.start, end=sig.end, usable=False, level="",
                                    sem_bit=-1, syn_bit=-1, contribution=0.0, repeated=False))
            continue
        level = level_of(model_key, sig.semantic)
        key = model_key if level == MODEL or user_key is None else user_key
        sem, syn = sentence_bits(key, sig)
        sem_new, syn_new = (level, "sem", sig.semantic) not in seen, (level, "syn", sig.syntactic) not in seen
        seen.update({(level, "sem", sig.semantic), (level, "syn", sig.syntactic)})
        contribution = w_sem * sem * sem_new + w_syn * syn * syn_new
        rows.append(SentenceRow(index=i, text=sig.text, start=sig.start, end=sig.end, usable=True, level=level,
                                sem_bit=sem, syn_bit=syn, contribution=float(contribution),
                                repeated=not (sem_new and syn_new)))
    return rows
