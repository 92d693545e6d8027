"""Unicode that hides or disguises text: made visible in names, removed or folded before detection.

Two jobs, one table of what counts as hidden:
- `visible(name)`: a name someone typed (a model, a user, an uploaded file) shown with its format and control
  characters written out as `\\u202e`, never applied: a right-to-left override would otherwise display
  "evil-model\\u202eko" as "evil-modelok" reversed, a zero-width space would make two names look the same.
- `normalize(text)`: what every watermark detector reads (backend.watermark.methods.detect), by the standard rather
  than by a list: every Default_Ignorable_Code_Point (Unicode's property: zero-width characters, variation selectors
  such as U+FE0F, the combining grapheme joiner U+034F, Hangul fillers such as U+3164, tag characters) and every
  format character (Cf: bidi controls, the soft hyphen, the BOM) removed; NFKC (fullwidth forms, mathematical bold
  and italic letters, Roman numerals, ligatures) and every space separator (Zs: NBSP, the U+2000 spaces, U+3000)
  made a space; then the letters Unicode's confusables data (UTS #39, data/unicode/latin_confusables.json) lists as
  look-alikes of a Latin letter folded to it. Counts of what was removed and folded come back with the text, so a
  verdict can say "412 invisible characters removed".

Folding is per word and only where it cannot change a real word of another script: a letter of another script
(Cyrillic, Greek, Armenian, Cherokee, ...) is folded when every letter of its script in that word has a Latin
look-alike and the word also holds a Latin letter (the usual attack: "wаtеrmаrk" with three Cyrillic letters), or
when the whole text is mostly Latin (a word made only of look-alikes, like the Cyrillic "а", inside English).
Russian, Greek or Armenian prose keeps its letters: its words have letters without a Latin twin, and its text is
not mostly Latin. Latin-script look-alikes ("ɑ") are always folded, but not the Turkish dotless and dotted i.
"""
from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import regex

_CONFUSABLES_FILE = Path(__file__).resolve().parents[1] / "data" / "unicode" / "latin_confusables.json"
_NOT_FOLDED = {"ı", "İ"}  # Turkish dotless and dotted i: real letters of Latin-script languages, not disguises
# what every detector's input loses: Unicode's Default_Ignorable_Code_Point property (the `regex` module knows it;
# Python's unicodedata does not) and category Cf (format characters, bidi controls, Arabic number signs)
_IGNORABLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cf}]+")
_SPACES = regex.compile(r"(?! )\p{Zs}")  # every space separator but " " (NBSP, U+2000..U+200A, U+202F, U+3000)


@lru_cache(maxsize=1)
def _confusables() -> dict[str, str]:
    """Character -> the ASCII Latin letter Unicode's confusables data (UTS #39) says it can be mistaken for
    (data/unicode/latin_confusables.json, written by scripts/build_latin_confusables.py)."""
    table = json.loads(_CONFUSABLES_FILE.read_text(encoding="utf-8"))["letters"]
    return {char: latin for char, latin in table.items() if char not in _NOT_FOLDED}


_WORD = re.compile(r"\b\w*[^\W\x00-\x7f]\w*")  # the words holding a non-ASCII letter: only those can change
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@dataclass(frozen=True)
class Normalized:
    """A text as the detectors read it, and what was changed to get it."""

    text: str
    removed: int  # format characters (Cf) removed: zero-width, bidi controls, soft hyphens, ...
    folded: int  # look-alike letters folded to Latin

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.folded)

    def describe(self) -> str:
        """One line for a page: "412 invisible characters removed · 3 look-alike letters folded to Latin"."""
        parts = []
        if self.removed:
            parts.append(f"{self.removed:,} invisible character{'s' if self.removed != 1 else ''} removed")
        if self.folded:
            parts.append(f"{self.folded:,} look-alike letter{'s' if self.folded != 1 else ''} folded to Latin")
        return " · ".join(parts)


def _hidden(char: str) -> bool:
    """Characters that change what a name looks like without being seen: format (Cf, bidi controls included),
    controls (Cc) and the line / paragraph separators."""
    return unicodedata.category(char) in ("Cf", "Cc", "Zl", "Zp")


def visible(name: object, keep: str = "") -> str:
    """`name` with every hidden character written as its escape (`\\u202e`): shown, never applied. Characters in
    `keep` stay as they are (line breaks in a message)."""
    text = str(name)
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(c) if _hidden(c) and c not in keep else c for c in text)


def _escape(char: str) -> str:
    return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"


@lru_cache(maxsize=4096)
def _script(char: str) -> str:
    try:
        return unicodedata.name(char).split(" ", 1)[0]
    except ValueError:
        return ""


def _mostly_latin(text: str) -> bool:
    """More than four Latin letters for each letter of another script that has no Latin twin."""
    latin = len(_ASCII_LETTER.findall(text))
    table = _confusables()
    other = sum(n for char, n in Counter(_NON_ASCII.findall(text)).items()
                if char.isalpha() and char not in table and _script(char) not in ("LATIN", ""))
    return latin > 4 * other


@lru_cache(maxsize=65536)  # prose repeats its words: each distinct one is looked at once
def _fold_word(word: str, mostly_latin: bool) -> tuple[str, int]:
    if word.isascii():
        return word, 0
    table = _confusables()
    has_latin = any(c.isascii() and c.isalpha() for c in word)
    scripts = {_script(c) for c in word if not c.isascii()}
    # a letter of another script is folded only where every letter of its script in the word has a Latin twin and
    # the word (or the text) is Latin: "wаtеrmаrk" folds, a Russian or Armenian word keeps its letters
    foldable = {s for s in scripts if s != "LATIN" and all(c in table for c in word if _script(c) == s)}
    fold_script = foldable if (has_latin or mostly_latin) else set()
    out, folded = [], 0
    for char in word:
        latin = table.get(char)
        if latin is not None and (_script(char) == "LATIN" or _script(char) in fold_script):
            out.append(latin)
            folded += 1
        else:
            out.append(char)
    return "".join(out), folded


def _compatibility(text: str) -> tuple[str, int]:
    """NFKC (fullwidth, mathematical alphanumerics, Roman numerals, ligatures to what they stand for) and every
    space separator to a space; returns the text and how many characters changed."""
    changed = sum(n for char, n in Counter(_NON_ASCII.findall(text)).items()
                  if unicodedata.normalize("NFKC", char) != char)
    text = unicodedata.normalize("NFKC", text)
    spaces = len(_SPACES.findall(text))
    return (_SPACES.sub(" ", text) if spaces else text), changed + spaces


def normalize(text: str) -> Normalized:
    """NFKC and spaces, default-ignorable and format characters removed, Latin look-alikes folded (see the
    module docstring)."""
    text = unicodedata.normalize("NFC", text or "")
    if text.isascii():
        return Normalized(text, 0, 0)
    kept = _IGNORABLE.sub("", text)  # before NFKC, which maps U+3164 to another filler, and after it
    removed = len(text) - len(kept)
    kept, folded = _compatibility(kept)
    again = _IGNORABLE.sub("", kept)
    removed += len(kept) - len(again)
    mostly_latin = _mostly_latin(again)

    def fold(match: re.Match) -> str:
        nonlocal folded
        word, count = _fold_word(match.group(0), mostly_latin)
        folded += count
        return word

    out = _WORD.sub(fold, again) if not again.isascii() else again
    return Normalized(unicodedata.normalize("NFC", out), removed, folded)
