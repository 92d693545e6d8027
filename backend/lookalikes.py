"""Letters that look like Latin ones, folded to them before detection (part of backend.unicode_text.normalize).

The table is Unicode's confusables data (UTS #39, data/unicode/latin_confusables.json, written by
scripts/build_latin_confusables.py). Folding is decided per word, whatever other scripts the text holds (a CJK tail
cannot switch it off): a letter of another script (Cyrillic, Greek, Armenian, Cherokee, ...) is folded when every
letter of its script in that word has a Latin look-alike and either the word also holds a Latin letter (the usual
attack: "wаtеrmаrk" with three Cyrillic letters) or no word near it holds a letter of that script without a Latin
twin (a word made only of look-alikes, like the Cyrillic "а", inside English). Russian, Greek or Armenian prose keeps
its letters: its words, or their neighbours, hold letters without a Latin twin. Latin-script look-alikes ("ɑ") are
always folded, but not the Turkish dotless and dotted i.

Order: the letters NFKC would turn into something else than an ASCII letter (the lunate sigma ϲ becomes ς, U+037A a
space and a combining mark) are folded before NFKC; the rest after it, where NFKC says what a compatibility form is
(the mathematical bold 𝐈 is an I, the long s ſ an s) rather than what it resembles.
"""
from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path

_FILE = Path(__file__).resolve().parents[1] / "data" / "unicode" / "latin_confusables.json"
_NOT_FOLDED = {"ı", "İ"}  # Turkish dotless and dotted i: real letters of Latin-script languages, not disguises
NEAR = 3  # words on each side that can show a look-alike-only word belongs to its own script's prose
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1)
def table() -> dict[str, str]:
    """Character -> the ASCII Latin letter it can be mistaken for (Turkish ı and İ left out). UTS #39 writes the
    look-alikes of I and l as "l" (its skeletons do not keep case); a capital one (Greek Ι, Cyrillic І) stands for I
    in a word, as the Latin text it imitates writes it."""
    letters = json.loads(_FILE.read_text(encoding="utf-8"))["letters"]
    return {char: "I" if latin == "l" and char.isupper() else latin
            for char, latin in letters.items() if char not in _NOT_FOLDED}


@lru_cache(maxsize=1)
def before_nfkc() -> dict[str, str]:
    """The entries NFKC would carry away from any ASCII letter: folded first, or never."""
    return {char: latin for char, latin in table().items() if not _ascii_letter(unicodedata.normalize("NFKC", char))}


def _ascii_letter(text: str) -> bool:
    return text.isascii() and text.isalpha()


@lru_cache(maxsize=4096)
def _script(char: str) -> str:
    try:
        return unicodedata.name(char).split(" ", 1)[0]
    except ValueError:
        return ""


@lru_cache(maxsize=4096)
def _latin(char: str) -> bool:
    """An ASCII letter, a Latin-script letter, or a compatibility form of an ASCII letter (fullwidth ｗ)."""
    return char.isalpha() and (char.isascii() or _script(char) == "LATIN"
                               or _ascii_letter(unicodedata.normalize("NFKC", char)))


@lru_cache(maxsize=65536)  # prose repeats its words: each distinct one is looked at once
def _scripts(word: str) -> tuple[bool, frozenset, frozenset]:
    """(holds a Latin letter, scripts whose letters in the word all have a twin, scripts with a letter that has none)."""
    letters = [c for c in word if c.isalpha() and not _latin(c)]
    real = frozenset(_script(c) for c in letters if c not in table())
    return any(_latin(c) for c in word), frozenset(_script(c) for c in letters) - real, real


@lru_cache(maxsize=65536)
def _fold_word(word: str, scripts: frozenset, before: bool) -> tuple[str, int]:
    lookup = before_nfkc() if before else table()
    out, folded = [], 0
    for char in word:
        latin = lookup.get(char)
        if latin is not None and (_script(char) == "LATIN" or _script(char) in scripts):
            out.append(latin)
            folded += 1
        else:
            out.append(char)
    return "".join(out), folded


@lru_cache(maxsize=65536)
def _holds_twin(word: str, before: bool) -> bool:
    lookup = before_nfkc() if before else table()
    return not word.isascii() and any(c in lookup for c in word)


def fold(text: str, before: bool) -> tuple[str, int]:
    """`text` with its look-alikes folded (the entries NFKC would spoil when `before`, else every entry) and how
    many letters were folded."""
    if text.isascii():
        return text, 0
    words = [m for m in _WORD.finditer(text)]
    out, end, folded = [], 0, 0
    for i, match in enumerate(words):
        word = match.group(0)
        if not _holds_twin(word, before):
            continue
        has_latin, twins, _ = _scripts(word)
        if not has_latin and twins:  # a word of look-alikes only: folded unless a near word writes its script for real
            near = range(max(0, i - NEAR), min(len(words), i + NEAR + 1))
            twins = twins.difference(*(_scripts(words[j].group(0))[2] for j in near if j != i))
        new, count = _fold_word(word, twins, before)
        if count:
            out.append(text[end:match.start()] + new)
            end, folded = match.end(), folded + count
    return ("".join(out) + text[end:] if folded else text), folded
