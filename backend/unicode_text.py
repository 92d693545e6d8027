"""Unicode that hides or disguises text: made visible in names, removed or folded before detection.

Two jobs, one table of what counts as hidden:
- `visible(name)`: a name someone typed (a model, a user, an uploaded file) shown with its format and control
  characters written out as `\\u202e`, never applied: a right-to-left override would otherwise display
  "evil-model\\u202eko" as "evil-modelok" reversed, a zero-width space would make two names look the same.
- `normalize(text)`: the one canonical form every watermark detector reads (backend.watermark.methods.detect), by
  the standard rather than by a list, so that nothing a reader cannot see changes a verdict:
  - every White_Space character (tabs, newlines, NBSP, the U+2000 spaces, U+2028 and U+2029, U+3000) and every run
    of them becomes one ASCII space, none at the ends;
  - the blank fillers (Hangul fillers such as U+3164 and U+FFA0, the Mongolian vowel separator U+180E) become a
    space where they stand between words, in a space's place, and are removed inside words: a text either writes
    its word breaks with them or hides them in its words, and the reading whose words have the length of prose is
    the one taken (see `_fillers_are_spaces`);
  - every other Default_Ignorable_Code_Point (zero-width characters, variation selectors such as U+FE0F, the
    combining grapheme joiner U+034F, tag characters), every format character (Cf: bidi controls, the soft hyphen,
    the BOM) and every C0/C1 control character (U+0001 inside a word) is removed;
  - NFKC (fullwidth forms, mathematical bold and italic letters, Roman numerals, ligatures), with the letters Unicode's
    confusables data lists as look-alikes of a Latin letter folded to it around it (backend.lookalikes: per word,
    and in the order that maps every entry of the table).
  Counts of what was removed and folded come back with the text, so a verdict can say "412 invisible characters
  removed"; whitespace made canonical is not counted (every pasted text has line breaks).
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

import regex

from backend.lookalikes import fold

# what every detector's input loses: Unicode's Default_Ignorable_Code_Point property (the `regex` module knows it;
# Python's unicodedata does not), category Cf (format characters, bidi controls, Arabic number signs) and the
# control characters that are not whitespace
_IGNORABLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cf}\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]+")
_FILLERS = "\u115f\u1160\u180e\u3164\uffa0"  # ignorable, yet drawn as a blank (or once a space, U+180E)
_FILLER_RUN = regex.compile(f"[{_FILLERS}][{_FILLERS}\\p{{Default_Ignorable_Code_Point}}\\p{{Cf}}]*")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_WHITESPACE = regex.compile(r"\p{White_Space}+")
_PLAIN = re.compile(r"(?:[!-~]+ )*[!-~]+")  # printable ASCII words one space apart: already canonical
PROSE_WORD = 5.5  # characters per word of English prose with its punctuation (German about 7, French about 5.5)


@dataclass(frozen=True)
class Normalized:
    """A text as the detectors read it, and what was changed to get it."""

    text: str
    removed: int  # invisible characters removed: zero-width, bidi controls, soft hyphens, controls, fillers, ...
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


def _mean_word(text: str) -> float:
    words = text.split()
    return sum(map(len, words)) / len(words) if words else 0.0


def _fillers_are_spaces(text: str) -> bool:
    """Whether the text's fillers write its word breaks ("The\u3164cat\u3164sat") rather than hide inside its words
    ("Th\u3164e c\u3164at"): the reading whose mean word length is nearer to prose's."""
    as_space = _mean_word(_IGNORABLE.sub("", _FILLER_RUN.sub(" ", text)))
    removed = _mean_word(_IGNORABLE.sub("", _FILLER_RUN.sub("", text)))
    return as_space > 0 and abs(math.log(as_space / PROSE_WORD)) < abs(math.log(max(removed, 1e-9) / PROSE_WORD))


def _compatibility_changes(text: str) -> int:
    """Characters NFKC changes (fullwidth ＦＵＬＬ, mathematical 𝐛𝐨𝐥𝐝) and spaces other than ASCII ones (NBSP, U+2028)."""
    return sum(n for char, n in Counter(_NON_ASCII.findall(text)).items()
               if char.isspace() or unicodedata.normalize("NFKC", char) != char)


def normalize(text: str) -> Normalized:
    """The canonical form detection reads (see the module docstring)."""
    text = unicodedata.normalize("NFC", text or "")
    if _PLAIN.fullmatch(text) or not text:
        return Normalized(text, 0, 0)
    removed = 0
    if _FILLER_RUN.search(text) and _fillers_are_spaces(text):
        spaced = _FILLER_RUN.sub(" ", text)
        removed, text = len(text) - len(spaced) + len(_FILLER_RUN.findall(text)), spaced
    kept = _IGNORABLE.sub("", text)  # before NFKC, which maps U+3164 to another filler, and after it
    removed += len(text) - len(kept)
    kept, folded = fold(kept, before=True)
    folded += _compatibility_changes(kept)
    compatible = unicodedata.normalize("NFKC", kept)
    again = _IGNORABLE.sub("", compatible)
    removed += len(compatible) - len(again)
    again, more = fold(again, before=False) if again != kept else (again, 0)  # what NFKC made may be a twin
    out = _WHITESPACE.sub(" ", again).strip(" ")
    return Normalized(unicodedata.normalize("NFC", out), removed, folded + more)
