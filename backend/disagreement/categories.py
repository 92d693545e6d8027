"""A coarse, rule-based category for each generated token, to see which kinds of token carry disagreement.

"planning" marks tokens that commit to what the solution does next (step markers, connectives,
operation words); the list is a heuristic for English arithmetic solutions, stated here in full.
"""
from __future__ import annotations

import re

PLANNING_WORDS = frozenset("""
step steps first second third then next so therefore thus hence finally now let lets let's we need to find
calculate compute add adding subtract subtracting multiply multiplying divide dividing total each per
answer solve solution start begin since because means remaining left altogether sum difference product
quotient times plus minus
""".split())
OPERATORS = frozenset("+-*/=×÷")

CATEGORIES = ("number", "operator", "planning", "word", "punctuation", "whitespace", "special")


def category(piece: str, special: bool = False) -> str:
    """The category of one decoded token string."""
    if special:
        return "special"
    text = piece.strip()
    if not text:
        return "whitespace"
    if re.fullmatch(r"[$]?\d[\d,.]*", text):
        return "number"
    if all(ch in OPERATORS for ch in text):
        return "operator"
    word = re.sub(r"[^a-z']", "", text.lower())
    if word and word in PLANNING_WORDS:
        return "planning"
    if word:
        return "word"
    return "punctuation"


def categorize(pieces, special_ids: frozenset[int] = frozenset(), token_ids=()) -> list[str]:
    ids = list(token_ids) or [None] * len(pieces)
    return [category(p, i in special_ids) for p, i in zip(pieces, ids)]
