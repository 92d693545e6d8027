"""Prompt formats and the head types, each defined by its corruption (`HEAD_TYPES`, run = the corruption).

Few-shot: k demonstrations `Q: {src}\\nA: {tgt}\\n\\n`, then the query `Q: {src}\\nA:`; the answer
the model should produce is ` {tgt}` (leading space), ended by a newline.
Corruptions change only the demonstration targets:
- translation ("sentence equivalence") heads: targets swapped for other target-language sentences,
  so the language is kept and the meaning is lost;
- language heads: targets replaced by the same sentence in another language, so the meaning is
  kept and the language is lost.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from backend.errors import UserError
from backend.mt.data import ParallelSet, language_name
from backend.variants import Registry, Variant


@dataclass(frozen=True)
class Demo:
    source: str
    target: str


def demo_block(demos: list[Demo]) -> str:
    return "".join(f"Q: {d.source}\nA: {d.target}\n\n" for d in demos)


def query(source: str) -> str:
    return f"Q: {source}\nA:"


def instruction(source: str, src: str, tgt: str) -> str:
    return f"Translate the following sentence from {language_name(src)} to {language_name(tgt)}: {source}"


def pick_demos(data: ParallelSet, query_row: int, k: int, rng: random.Random) -> list[int]:
    """k demonstration rows from the `heads` split, never the query itself."""
    pool = [r for r in data.rows("heads") if r != query_row]
    if k > len(pool):
        raise UserError(f"{k} demonstrations were asked for but the 'heads' split has only {len(pool)} other rows.")
    return rng.sample(pool, k)


def corrupt_language(data: ParallelSet, src: str, tgt: str, requested: str | None = None) -> str:
    """The language that replaces demonstration targets for language heads: the requested one, else the
    first language of the set that is neither source nor target, else the source language itself."""
    if requested:
        if requested not in data.languages:
            raise UserError(f"Corruption language {requested!r} is not in the data set.")
        if requested == tgt:
            raise UserError("The corruption language must differ from the target language.")
        return requested
    others = [lang for lang in data.languages if lang not in (src, tgt)]
    return others[0] if others else src


@dataclass(frozen=True)
class HeadType(Variant):
    """`run(data, demos, src, tgt, query_row, rng, other_lang) -> [Demo]`: the corrupted demonstrations.
    `keeps`: what a corrupted target shares with the clean one ("language" or "meaning"); the other is lost."""

    keeps: str = ""


HEAD_TYPES: Registry[HeadType] = Registry("mt-head-type", "head type")


def _translation_corruption(data: ParallelSet, demos: list[int], src: str, tgt: str, query_row: int,
                            rng: random.Random, other_lang: str) -> list[Demo]:
    # Each target is the translation of a different row (never the demo's own, never the query's).
    pool = [r for r in data.rows("heads") if r != query_row]
    out = []
    for row in demos:
        choices = [r for r in pool if r != row and data.text(tgt, r) != data.text(tgt, row)]
        out.append(Demo(data.text(src, row), data.text(tgt, rng.choice(choices))))
    return out


def _language_corruption(data: ParallelSet, demos: list[int], src: str, tgt: str, query_row: int,
                         rng: random.Random, other_lang: str) -> list[Demo]:
    return [Demo(data.text(src, row), data.text(other_lang, row)) for row in demos]


HEAD_TYPES.register(HeadType(
    "language", "Language heads",
    "target-language heads: demonstration targets in another language (meaning kept)",
    _language_corruption, keeps="meaning"))
HEAD_TYPES.register(HeadType(
    "translation", "Translation heads",
    "sentence-equivalence heads: demonstration targets replaced by unrelated target-language sentences "
    "(language kept)", _translation_corruption, keeps="language"))


@dataclass(frozen=True)
class PromptPair:
    """One head-finding example: clean and corrupted few-shot prompts sharing the query and answer."""

    row: int
    clean: str
    corrupt: str
    answer: str  # the reference target with its leading space


def prompt_pair(data: ParallelSet, row: int, src: str, tgt: str, head_type: str, k: int, rng: random.Random,
                other_lang: str) -> PromptPair:
    corruption = HEAD_TYPES.get(head_type).run
    demos = pick_demos(data, row, k, rng)
    clean = [Demo(data.text(src, r), data.text(tgt, r)) for r in demos]
    corrupt = corruption(data, demos, src, tgt, row, rng, other_lang)
    q = query(data.text(src, row))
    return PromptPair(row, demo_block(clean) + q, demo_block(corrupt) + q, " " + data.text(tgt, row))
