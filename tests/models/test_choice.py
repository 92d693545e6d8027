"""Which model a page opens on: the Decoding page's best reasoner whose adapter is on disk."""
import json

from backend.disagreement import pair
from backend.models import choice
from backend.models.allowlist import ModelSpec


def adapter(tmp_path, name: str) -> str:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "adapter_config.json").write_text(json.dumps({"r": 8}))
    return str(directory)


def specs(tmp_path, with_adapter: set[str]) -> list[ModelSpec]:
    base = ModelSpec("base", "base", "embedded:base")
    return [base] + [ModelSpec(i, i, "embedded:base", adapter=adapter(tmp_path, i) if i in with_adapter
                               else str(tmp_path / "missing" / i)) for i in choice.ARITHMETIC_REASONER_IDS]


def test_decoding_opens_on_the_first_reasoner_with_its_adapter_on_disk(tmp_path, monkeypatch):
    best, fallback = choice.ARITHMETIC_REASONER_IDS
    monkeypatch.setattr(choice, "list_models", lambda: specs(tmp_path, {best, fallback}))
    assert choice.arithmetic_reasoner() == best


def test_a_missing_adapter_falls_back_to_the_next_reasoner_then_to_none(tmp_path, monkeypatch):
    best, fallback = choice.ARITHMETIC_REASONER_IDS
    monkeypatch.setattr(choice, "list_models", lambda: specs(tmp_path, {fallback}))
    assert choice.arithmetic_reasoner() == fallback
    monkeypatch.setattr(choice, "list_models", lambda: specs(tmp_path, set()))
    assert choice.arithmetic_reasoner() is None


def test_the_disagreement_pair_keeps_its_own_reasoner():
    """The Disagreement page's reasoner is chosen for its intervention sweep, not for its accuracy alone."""
    assert pair.DEFAULT_REASONING_ID in choice.ARITHMETIC_REASONER_IDS
    assert choice.ARITHMETIC_REASONER_IDS[0] != pair.DEFAULT_REASONING_ID


def test_the_pages_that_open_on_another_model_declare_it_in_the_feature_list():
    from backend.features import opening_model
    from backend.models import arithmetic_reasoner, translator

    assert opening_model("decoding.py") is arithmetic_reasoner
    assert opening_model("mt_heads.py") is translator
    assert opening_model("nag.py") is None and opening_model(".py") is None
