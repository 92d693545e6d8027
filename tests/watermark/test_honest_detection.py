"""Detection on human text with 120 identities registered: the shown p-values are corrected for the keys
searched (the model level over the 2 models, the user level over the 60 users of that model), the verdict agrees
with them, no sentence is coloured as evidence, and the CLI JSON carries the same fields as the common Detection."""
import json

import pytest

from backend.__main__ import main
from backend.watermark import identities
from backend.watermark.corpus import human_texts
from backend.watermark.methods import EVIDENCE_MARKS, WATERMARKED, DetectRequest, detect
from tests.watermark.test_detection import balanced_text


@pytest.fixture
def crowd_of_120():
    """Two models with 60 users each (120 identities)."""
    for name in ("model-a", "model-b"):
        identities.bulk_add_users(identities.add_model(name).address, 60)


def test_human_texts_show_corrected_evidence_and_no_green_sentence(crowd_of_120):
    for text in human_texts()[:6]:
        found = detect(text, DetectRequest("ipmark"))
        assert found.verdict != WATERMARKED and not found.flagged
        assert found.compared == 2 and found.keys_evaluated >= 62  # 2 model keys + the users of scored models
        assert found.p_family >= found.p_value and found.p_family > 1e-3
        assert found.corrected_over == "Šidák over 2 models"
        for level in found.levels:
            assert level.compared > 1 and level.p_family >= level.p_value
        # the levels shown are the ones the verdict uses: the model's, then its users' (no total over everyone)
        assert {lv.level: lv.compared for lv in found.levels} == {"model": 2, "user": 60}
        assert not [mark for _, mark, _ in found.pieces if mark in EVIDENCE_MARKS]


def test_watermarked_text_keeps_its_evidence_colours(fixed_secret, crowd_of_120):
    model = identities.list_models()[0].address
    text, _ = balanced_text(model, 7)
    found = detect(text, DetectRequest("ipmark"))
    assert found.flagged and found.p_family < 1e-3 and (found.model_address, found.guess_user) == (model, 7)
    assert {mark for _, mark, _ in found.pieces} & {"strong", "weak"}


def test_cli_json_has_the_raw_and_the_corrected_p(crowd_of_120, capsys):
    text = human_texts()[0]
    assert main(["watermark", "detect", "--method", "ipmark", "--text", text, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    found = detect(text, DetectRequest("ipmark"))
    assert out["p_value"] == found.p_value and out["p_corrected"] == found.p_family
    assert out["best_of_keys"] == found.compared == 2 and out["corrected_over"] == "Šidák over 2 models"
    assert out["user_level"]["best_of_keys"] == 60 and out["user_level"]["p_corrected"] >= out["user_level"]["p_value"]
    assert out["total"]["best_of_keys"] == 1  # the ROC statistic's evidence: raw, it decides nothing
    assert out["verdict"] == found.verdict != WATERMARKED
