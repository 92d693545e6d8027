"""chrF++ and language identification on known strings (values computed by hand, not by the library)."""
import math

import pytest

from backend.mt.metrics import DEFAULT_CANDIDATES, candidates_for, chrf_pp, identify, sentence_chrf_pp


def test_identical_strings_score_100():
    assert sentence_chrf_pp("Le chat dort.", "Le chat dort.") == pytest.approx(100.0)
    assert chrf_pp(["le chat", "un chien"], ["le chat", "un chien"]) == pytest.approx(100.0)
    assert math.isnan(chrf_pp([], []))


def test_chrf_pp_by_hand_for_cat_vs_cats():
    # Character n-grams (spaces dropped), orders 1-6, hypothesis "cat" vs reference "cats":
    #   order 1: 3 of 3 hyp grams match, 4 ref grams -> P 1, R 3/4
    #   order 2: ca, at match; ref ca, at, ts        -> P 1, R 2/3
    #   order 3: cat matches; ref cat, ats           -> P 1, R 1/2
    #   orders 4-6: no hypothesis grams              -> not counted (effective order)
    # Word n-grams (chrF++ adds orders 1-2): "cat" vs "cats" -> P 0, R 0; no bigrams.
    # P = (1 + 1 + 1 + 0) / 4 = 0.75, R = (3/4 + 2/3 + 1/2 + 0) / 4 = 23/48,
    # F_beta with beta = 2: (1 + 4) P R / (4 P + R).
    p, r = 0.75, 23 / 48
    expected = 100 * 5 * p * r / (4 * p + r)
    assert expected == pytest.approx(51.6467, abs=1e-4)
    assert sentence_chrf_pp("cat", "cats") == pytest.approx(expected, abs=1e-9)
    assert chrf_pp(["cat"], ["cats"]) == pytest.approx(expected, abs=1e-9)  # one sentence: corpus = sentence


def test_swapped_words_keep_unigrams_and_lose_bigrams():
    # "b a" vs "a b": characters b,a / a,b (P = R = 1), character bigram "ba" vs "ab" (0), word unigrams
    # match (1), the word bigram does not (0): P = R = (1 + 0 + 1 + 0) / 4 = 0.5, so F = 50.
    assert sentence_chrf_pp("b a", "a b") == pytest.approx(50.0)
    # and a different word order scores lower than the same order
    ref = "the cat sat on the mat"
    assert sentence_chrf_pp("on the mat the cat sat", ref) < sentence_chrf_pp(ref, ref)


@pytest.mark.parametrize("text, lang", [
    ("The weather is lovely today and we are going to the park.", "en"),
    ("Le chat dort sur le canapé depuis ce matin.", "fr"),
    ("Der Hund spielt im Garten mit den Kindern.", "de"),
    ("El niño come una manzana en la cocina.", "es"),
])
def test_language_id_on_clear_sentences(text, lang):
    assert identify(text) == lang
    assert identify(text, ("en", "fr", "de", "es")) == lang


def test_language_id_without_letters_is_empty_and_candidates_grow_with_the_data():
    assert identify("12:30") == "" and identify("") == ""
    assert candidates_for(("en", "fr")) == tuple(sorted(DEFAULT_CANDIDATES))
    assert "sv" in candidates_for(("en", "sv")) and "xx" not in candidates_for(("en", "xx"))
