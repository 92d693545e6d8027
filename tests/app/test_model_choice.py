"""Which model a page opens on (app/model_choice.py): the Decoding page's best reasoner whose adapter is on disk,
the MT page's translator when it loads without a download, the default elsewhere."""
import json

from app import model_choice
from backend.disagreement import pair
from backend.features import FEATURES
from backend.models.allowlist import ModelSpec


def adapter(tmp_path, name: str) -> str:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "adapter_config.json").write_text(json.dumps({"r": 8}))
    return str(directory)


def specs(tmp_path, with_adapter: set[str]) -> list[ModelSpec]:
    base = ModelSpec("base", "base", "embedded:base")
    return [base] + [ModelSpec(i, i, "embedded:base", adapter=adapter(tmp_path, i) if i in with_adapter
                               else str(tmp_path / "missing" / i)) for i in model_choice.ARITHMETIC_REASONER_IDS]


def test_decoding_opens_on_the_first_reasoner_with_its_adapter_on_disk(tmp_path, monkeypatch):
    best, fallback = model_choice.ARITHMETIC_REASONER_IDS
    both = specs(tmp_path, {best, fallback})
    monkeypatch.setattr(model_choice, "list_models", lambda: both)
    assert model_choice.arithmetic_reasoner() == best
    assert model_choice.recommended_model("decoding.py") == best


def test_a_missing_adapter_falls_back_to_the_next_reasoner_then_to_none(tmp_path, monkeypatch):
    best, fallback = model_choice.ARITHMETIC_REASONER_IDS
    monkeypatch.setattr(model_choice, "list_models", lambda: specs(tmp_path, {fallback}))
    assert model_choice.arithmetic_reasoner() == fallback
    monkeypatch.setattr(model_choice, "list_models", lambda: specs(tmp_path, set()))
    assert model_choice.arithmetic_reasoner() is None


def test_the_translator_only_when_it_loads_without_a_download(monkeypatch):
    translator = ModelSpec(model_choice.TRANSLATOR, "translator", "embedded:gemma-3-270m")
    monkeypatch.setattr(model_choice, "list_models", lambda: [translator])
    monkeypatch.setattr(model_choice, "loads_offline", lambda name: name == "gemma-3-270m")
    assert model_choice.translator() == model_choice.TRANSLATOR == model_choice.recommended_model("mt_heads.py")
    monkeypatch.setattr(model_choice, "loads_offline", lambda name: False)
    assert model_choice.translator() is None
    monkeypatch.setattr(model_choice, "list_models", lambda: [])
    assert model_choice.translator() is None


def test_the_disagreement_pair_keeps_its_own_reasoner():
    """The Disagreement page's reasoner is chosen for its intervention sweep, not for its accuracy alone."""
    assert pair.DEFAULT_REASONING_ID in model_choice.ARITHMETIC_REASONER_IDS
    assert model_choice.ARITHMETIC_REASONER_IDS[0] != pair.DEFAULT_REASONING_ID


def test_only_feature_pages_open_on_another_model_and_the_rest_on_the_default(monkeypatch):
    pages = {f.page for f in FEATURES}
    assert set(model_choice.opens_on()) <= pages
    monkeypatch.setattr(model_choice, "list_models", lambda: [])  # no recommendation could be met either
    for page in pages - set(model_choice.opens_on()) | {".py", "runs.py"}:
        assert model_choice.recommended_model(page) is None
