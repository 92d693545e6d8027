"""The one sentence segmenter, used by generation (where a candidate sentence ends) and by detection.

Rules (deliberately simple and local, so that the units found in a prefix never change when text
is appended):
- a boundary follows a run of terminal punctuation `. ! ? …` (plus closing quotes/brackets) when
  whitespace comes next, and every line break is a boundary; commas never are;
- a segment with fewer than `min_words` words is merged into the segment after it (a trailing short
  segment stays a unit of its own), so "Hi. How are you?" is one unit and list markers do not
  become units.
A unit is "complete" once text after it has started; generation cuts candidates there.
No abbreviation list: "e.g. this" splits after "e.g.", the same way in generation and detection.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

MIN_WORDS = 3
_BOUNDARY = re.compile(r"[.!?\u2026\u3002\uff01\uff1f]+[\"'\u2019\u201d)\]\u00bb]*(?=\s)|\n")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Unit:
    """One sentence unit: `text` stripped, `start`/`end` character offsets into the source text."""

    text: str
    start: int
    end: int
    words: int

    @property
    def usable(self) -> bool:
        return self.words >= MIN_WORDS


def _raw_segments(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _BOUNDARY.finditer(text):
        end = match.end() if match.group() != "\n" else match.start()
        spans.append((start, end))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


def split_units(text: str, min_words: int = MIN_WORDS) -> list[Unit]:
    """The sentence units of `text`, in order; whitespace-only segments are dropped."""
    units: list[Unit] = []
    pending: int | None = None  # start of a short segment waiting to be merged forward
    for start, end in _raw_segments(text):
        chunk = text[start:end]
        if not chunk.strip():
            continue
        begin = start if pending is None else pending
        words = count_words(text[begin:end])
        if words < min_words:
            pending = begin
            continue
        units.append(_unit(text, begin, end, words))
        pending = None
    if pending is not None:
        units.append(_unit(text, pending, len(text), count_words(text[pending:])))
    return units


def _unit(text: str, start: int, end: int, words: int) -> Unit:
    raw = text[start:end]
    lead = len(raw) - len(raw.lstrip())
    body = raw.strip()
    return Unit(text=body, start=start + lead, end=start + lead + len(body), words=words)


def sentences(text: str) -> list[str]:
    return [u.text for u in split_units(text)]
