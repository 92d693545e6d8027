"""A hill-climbing forger (issue 46 §1): edit a text one character at a time and keep an edit whenever the
detector's shown score does not fall, until the detector flags it at p < 0.01 or the query budget is spent.

Against a detector that shows a score that grows smoothly toward a mark (KGW's z, its green-token count) this
forges the mark in a few hundred queries; against one that shows only the verdict it is a blind random walk."""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from backend.errors import UserError

ALPHABET = "abcdefghijklmnopqrstuvwxyz "


@dataclass(frozen=True)
class Forgery:
    forged: bool  # the detector flagged the text at p < 0.01
    queries: int
    refused: bool  # the detector refused a query (its budget)
    best_score: float  # the best score the forger saw (0 when it saw none)
    text: str


def _score(found) -> float:
    if found.flagged:
        return math.inf
    return found.z if found.z is not None else 0.0  # nothing shown: every text looks the same


def hill_climb(query: Callable[[str], object], max_queries: int = 1000, length: int = 100, seed: int = 0) -> Forgery:
    """`query(text) -> Detection`. Success: flagged with its shown p (the corrected one) under 0.01."""
    rng = random.Random(seed)
    text = "".join(rng.choice(ALPHABET) for _ in range(length))
    best, queries = -math.inf, 0
    while queries < max_queries:
        position = rng.randrange(length)
        candidate = text if queries == 0 else text[:position] + rng.choice(ALPHABET) + text[position + 1:]
        try:
            found = query(candidate)
        except UserError:
            return Forgery(False, queries, True, max(best, 0.0), text)
        queries += 1
        if found.flagged and found.p_family is not None and found.p_family < 0.01:
            return Forgery(True, queries, False, math.inf, candidate)
        score = _score(found)
        if score >= best:
            text, best = candidate, score
    return Forgery(False, queries, False, max(best, 0.0), text)
