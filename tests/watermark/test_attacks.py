import pytest

from backend.errors import UserError
from backend.watermark.attacks import ATTACKS, AttackContext, apply_attack, synonyms
from backend.watermark.segment import sentences
from backend.watermark.skeleton import CATEGORY, skeleton

TEXT = ("The old city was quiet and calm. People walked slowly along the street. A huge market filled the square "
        "with music. Children ran to see the bright flowers. The river was cold and the sky was grey.")
OTHER = "An unrelated first sentence appears. Another unrelated sentence follows. A third unrelated one ends."


def test_registry_lists_every_attack():
    assert {"word_deletion", "synonym_substitution", "copy_paste", "sentence_shuffle", "sentence_truncation",
            "sentence_deletion", "lm_paraphrase"} <= set(ATTACKS.names())
    with pytest.raises(UserError):
        apply_attack("nope", TEXT)
    with pytest.raises(UserError):
        apply_attack("word_deletion", TEXT, 1.5)


def test_synonym_dictionary_holds_content_words_only():
    for word, alternatives in synonyms().items():  # a function word (CATEGORY) is part of the skeleton
        assert word.lower() not in CATEGORY, word
        assert all(a.lower() not in CATEGORY and " " not in a for a in alternatives), word


def test_synonym_substitution_keeps_the_skeleton():
    attacked = apply_attack("synonym_substitution", TEXT, 0.3, AttackContext(seed=1))
    assert attacked != TEXT
    assert [skeleton(s) for s in sentences(attacked)] == [skeleton(s) for s in sentences(TEXT)]
    assert apply_attack("synonym_substitution", TEXT, 0.3, AttackContext(seed=1)) == attacked  # seeded


def test_sentence_level_attacks():
    parts = sentences(TEXT)
    assert sorted(sentences(apply_attack("sentence_shuffle", TEXT, 1.0, AttackContext(seed=3)))) == sorted(parts)
    assert len(sentences(apply_attack("sentence_truncation", TEXT, 0.4))) == 3
    assert set(sentences(apply_attack("sentence_deletion", TEXT, 0.5, AttackContext(seed=2)))) <= set(parts)
    mixed = sentences(apply_attack("copy_paste", TEXT, 0.375, AttackContext(seed=0, other_text=OTHER)))
    assert len(mixed) == 8 and set(parts) <= set(mixed)
    deleted = apply_attack("word_deletion", TEXT, 0.2, AttackContext(seed=0))
    assert len(deleted.split()) < len(TEXT.split())


def test_paraphrase_needs_a_model_and_uses_it():
    with pytest.raises(UserError):
        apply_attack("lm_paraphrase", TEXT)
    assert apply_attack("lm_paraphrase", TEXT, ctx=AttackContext(paraphrase=str.upper)) == TEXT.upper()
