"""Token categories on hand-labelled tokens (they stand behind the README's "planning words 4.2x"), and the
enrichment computed from them."""
import numpy as np
import pytest

from backend.disagreement.categories import CATEGORIES, PLANNING_WORDS, categorize, category
from backend.disagreement.concentration import concentration

LABELLED = [
    # numbers, with currency, decimals, thousands separators, a trailing period
    (" 42", "number"), ("7", "number"), ("$5", "number"), ("3.50", "number"), ("1,000", "number"), ("12.", "number"),
    # operators, alone or in runs
    ("+", "operator"), (" =", "operator"), ("×", "operator"), ("÷", "operator"), ("-", "operator"), ("*=", "operator"),
    # planning words: step markers, connectives, operation words, in any case and with punctuation
    (" Step", "planning"), (" First", "planning"), ("Let's", "planning"), (" so", "planning"), (" then,", "planning"),
    (" total", "planning"), (" subtract", "planning"), (" Therefore", "planning"), (" times", "planning"),
    # other words
    (" apples", "word"), ("Maya", "word"), (" bill", "word"), (" she", "word"), ("x", "word"),
    # punctuation and whitespace
    (".", "punctuation"), (":", "punctuation"), ("(", "punctuation"), ("?", "punctuation"),
    (" ", "whitespace"), ("\n", "whitespace"), ("\n\n", "whitespace"), ("", "whitespace"),
]


@pytest.mark.parametrize("piece, expected", LABELLED)
def test_hand_labelled_tokens(piece, expected):
    assert category(piece) == expected


def test_every_category_is_reached_and_special_tokens_win():
    assert {label for _, label in LABELLED} | {"special"} == set(CATEGORIES)
    assert category("<|im_end|>", special=True) == "special" and category(" Step", special=True) == "special"
    assert {"step", "therefore", "subtract", "total"} <= PLANNING_WORDS and "apples" not in PLANNING_WORDS


def test_categorize_marks_special_ids_only():
    pieces = [" Step", " 1", ":", "<|im_end|>"]
    assert categorize(pieces, frozenset({9}), [4, 5, 6, 9]) == ["planning", "number", "punctuation", "special"]
    assert categorize(pieces) == ["planning", "number", "punctuation", "word"]  # no ids: an EOS piece is a word


def test_enrichment_of_a_category_among_the_top_tokens():
    """10 tokens, 2 planning; the single top token (10%) is planning: enrichment (1/1) / (2/10) = 5x."""
    cats = categorize([" so", " apples", " 3", " +", " 4", " =", " 7", " total", ".", " pens"])
    values = np.array([9.0, 1, 1, 1, 1, 1, 1, 2, 1, 1])
    c = concentration("ce", values, np.arange(10), np.full(10, 10), values, cats, top_fraction=0.1)
    enrichment = c.category_enrichment()
    assert c.categories["planning"] == (1, 2)
    assert enrichment["planning"] == pytest.approx(5.0)
    assert enrichment["number"] == pytest.approx(0.0)
