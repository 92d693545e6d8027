"""Text shipped with the feature (written for this project): human-written paragraphs and prompts."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def _lines(name: str) -> tuple[str, ...]:
    text = (DATA / name).read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=None)
def human_texts() -> tuple[str, ...]:
    """39 short paragraphs (5-6 sentences each) on everyday topics."""
    return _lines("human_texts.txt")


@lru_cache(maxsize=None)
def prompts() -> tuple[str, ...]:
    """40 short writing prompts."""
    return _lines("prompts.txt")
