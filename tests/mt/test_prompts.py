import random

import pytest

from backend.errors import UserError
from backend.mt.data import builtin
from backend.mt.prompts import HEAD_TYPES, corrupt_language, prompt_pair


def _targets(prompt: str) -> list[str]:
    return [line[3:] for line in prompt.split("\n") if line.startswith("A: ")]


def _sources(prompt: str) -> list[str]:
    return [line[3:] for line in prompt.split("\n") if line.startswith("Q: ")]


def test_clean_prompt_format():
    data = builtin()
    pair = prompt_pair(data, 5, "en", "fr", "language", 3, random.Random(0), "de")
    assert pair.clean.endswith(f"Q: {data.text('en', 5)}\nA:")
    assert pair.clean.count("\n\n") == 3
    assert pair.answer == " " + data.text("fr", 5)
    fr = set(data.columns["fr"])
    assert all(t in fr for t in _targets(pair.clean))


def test_language_corruption_keeps_meaning_changes_language():
    data = builtin()
    for seed in range(5):
        clean = prompt_pair(data, 10, "en", "fr", "language", 5, random.Random(seed), "de")
        corrupt = prompt_pair(data, 10, "en", "fr", "language", 5, random.Random(seed), "de").corrupt
        sources, targets = _sources(corrupt), _targets(corrupt)
        assert sources == _sources(clean.clean)  # same demonstrations and query
        for src, tgt in zip(sources, targets):
            row = data.columns["en"].index(src)
            assert tgt == data.text("de", row)  # same sentence, other language


def test_translation_corruption_keeps_language_loses_meaning():
    data = builtin()
    fr = set(data.columns["fr"])
    pair = prompt_pair(data, 10, "en", "fr", "translation", 5, random.Random(1), "de")
    assert _sources(pair.corrupt) == _sources(pair.clean)
    for src, tgt in zip(_sources(pair.corrupt), _targets(pair.corrupt)):
        row = data.columns["en"].index(src)
        assert tgt in fr and tgt != data.text("fr", row)
    assert data.text("fr", 10) not in _targets(pair.corrupt)  # never leaks the query's answer
    assert pair.corrupt.endswith(f"Q: {data.text('en', 10)}\nA:")


def test_demonstrations_come_from_the_heads_split_and_never_the_query():
    data = builtin()
    heads = {data.text("en", r) for r in data.rows("heads")}
    for head_type in HEAD_TYPES.names():
        pair = prompt_pair(data, 0, "en", "fr", head_type, 5, random.Random(3), "de")
        demos = _sources(pair.clean)[:-1]
        assert set(demos) <= heads and data.text("en", 0) not in demos


def test_corruption_language_choice(tiny_data):
    data = builtin()
    assert corrupt_language(data, "en", "fr") == "de"
    assert corrupt_language(data, "en", "de") == "fr"
    assert corrupt_language(data, "en", "fr", "es") == "es"
    with pytest.raises(UserError):
        corrupt_language(data, "en", "fr", "fr")
    two = builtin().__class__("x", ("en", "fr"), tiny_data.ids, tiny_data.splits,
                              {k: tiny_data.columns[k] for k in ("en", "fr")})
    assert corrupt_language(two, "en", "fr") == "en"  # falls back to copying the source language
