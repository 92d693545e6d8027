"""Unicode that hides or disguises text: made visible in names, removed or folded before detection.

Two jobs, one table of what counts as hidden:
- `visible(name)`: a name someone typed (a model, a user, an uploaded file) shown with its format and control
  characters written out as `\\u202e`, never applied: a right-to-left override would otherwise display
  "evil-model\\u202eko" as "evil-modelok" reversed, a zero-width space would make two names look the same.
- `normalize(text)`: what every watermark detector reads (backend.watermark.methods.detect): Unicode NFC, the
  format characters (category Cf: zero-width spaces and joiners, bidi controls, the soft hyphen, the BOM, tag
  characters) removed, and the look-alikes of Latin letters from the scripts an attacker reaches for (Cyrillic,
  Greek, fullwidth Latin) folded to the Latin letters they imitate. Counts of what was removed and folded come
  back with the text, so a verdict can say "412 invisible characters removed".

Folding is per word and only where it cannot change a real word of another script: a Cyrillic or Greek letter is
folded when every letter of its script in that word has a Latin look-alike and the word also holds a Latin letter
(the usual attack: "wаtеrmаrk" with three Cyrillic letters), or when the whole text is mostly Latin (a word made
only of look-alikes, like the Cyrillic "а", inside English). Russian or Greek prose keeps its letters: its words
have letters without a Latin twin, and its text is not mostly Latin. Fullwidth Latin is always folded.
The table is ours: the letters whose usual glyphs match a Latin letter's, lower and upper case.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

# Cyrillic letters drawn like Latin ones (the common confusables; letters merely similar, like "п", are left).
_CYRILLIC = {
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j",
    "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ү": "y",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Һ": "H", "Ӏ": "I",
}
# Greek letters drawn like Latin ones.
_GREEK = {
    "ο": "o", "ν": "v", "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "α": "a", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
}
# Latin-script look-alikes outside ASCII that only an attacker writes in English prose.
_LATIN_EXTRA = {"ɡ": "g", "ℓ": "l"}  # not the Turkish dotless ı: a real letter
_FOLD_SCRIPTS = {"CYRILLIC": _CYRILLIC, "GREEK": _GREEK}
_WORD = re.compile(r"\b\w*[^\W\x00-\x7f]\w*")  # the words holding a non-ASCII letter: only those can change
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_FULLWIDTH = re.compile("[\uff01-\uff5e]")


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


def _fullwidth(char: str) -> str | None:
    code = ord(char)
    return chr(code - 0xFEE0) if 0xFF01 <= code <= 0xFF5E else None


def _mostly_latin(text: str) -> bool:
    """More than four Latin letters for each Cyrillic or Greek letter that has no Latin twin."""
    latin = len(_ASCII_LETTER.findall(text))
    other = sum(n for char, n in Counter(_NON_ASCII.findall(text)).items()
                if char.isalpha() and _script(char) in _FOLD_SCRIPTS and char not in _CYRILLIC and char not in _GREEK)
    return latin > 4 * other


@lru_cache(maxsize=65536)  # prose repeats its words: each distinct one is looked at once
def _fold_word(word: str, mostly_latin: bool) -> tuple[str, int]:
    if word.isascii():
        return word, 0
    out, folded = [], 0
    has_latin = any(c.isascii() and c.isalpha() for c in word)
    scripts = {_script(c) for c in word if not c.isascii()}
    foldable = {s for s in scripts & _FOLD_SCRIPTS.keys()
                if all(c in _FOLD_SCRIPTS[s] for c in word if _script(c) == s)}
    fold_script = foldable if (has_latin or mostly_latin) else set()
    for char in word:
        latin = _fullwidth(char) or _LATIN_EXTRA.get(char)
        if latin is None and char.isascii():
            out.append(char)
            continue
        if latin is None and _script(char) in fold_script:
            latin = _FOLD_SCRIPTS[_script(char)][char]
        if latin is None:
            out.append(char)
        else:
            out.append(latin)
            folded += 1
    return "".join(out), folded


@lru_cache(maxsize=1)
def _format_characters() -> dict[int, None]:
    """Every character of category Cf in this Python's Unicode database, as a str.translate table removing them
    (built once, about 0.4 s)."""
    return dict.fromkeys(c for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf")


def normalize(text: str) -> Normalized:
    """NFC, format characters removed, Latin look-alikes folded (see the module docstring)."""
    text = unicodedata.normalize("NFC", text or "")
    if text.isascii():
        return Normalized(text, 0, 0)
    kept = text.translate(_format_characters())
    removed = len(text) - len(kept)
    mostly_latin = _mostly_latin(kept)
    folded = 0

    def fold(match: re.Match) -> str:
        nonlocal folded
        word, count = _fold_word(match.group(0), mostly_latin)
        folded += count
        return word

    out = _WORD.sub(fold, kept) if not kept.isascii() else kept
    # fullwidth punctuation outside words ("！"), folded like fullwidth letters
    rest = _FULLWIDTH.sub(lambda m: chr(ord(m.group(0)) - 0xFEE0), out)
    folded += len(_FULLWIDTH.findall(out))
    return Normalized(unicodedata.normalize("NFC", rest), removed, folded)
