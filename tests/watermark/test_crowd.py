"""A crowd of users cannot hide a model: the model level is decided on its own, corrected over the registered
models only; the user level is corrected over that model's users only; the p-values shown are the verdict's."""
import time

from backend.watermark import identities
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.methods import WATERMARKED, DetectRequest, detect
from backend.watermark.oracle import corpus_sentences, select
from backend.watermark.retrieval import best_user
from backend.watermark.scoring import USER, bits_of, level_messages, prepare
from backend.watermark.keys import model_key, user_key
from backend.watermark.signatures import sign_text
from tests.watermark.test_detection import balanced_text


def _levels(found) -> dict:
    return {lv.level: lv for lv in found.levels}


def test_100000_users_do_not_change_the_model_verdict_or_its_p_value(fixed_secret):
    model = identities.add_model("crowded-model").address
    first = identities.add_user(model, "alice").user_address
    identities.add_user(model, "bob")
    text, _ = balanced_text(model, first)

    few = detect(text, DetectRequest("ipmark"))
    assert few.verdict == WATERMARKED and few.model_address == model and few.user_address == first
    assert _levels(few)["model"].corrected_over == "Šidák over 1 model"
    assert _levels(few)["user"].corrected_over == f"Šidák over 2 users of model {model}"

    start = time.perf_counter()
    identities.bulk_add_users(model, 99_998, "crowd")  # straight into the store: one statement
    created = time.perf_counter() - start
    start = time.perf_counter()
    many = detect(text, DetectRequest("ipmark"))
    seconds = time.perf_counter() - start
    print(f"100,000 users: created in {created:.2f} s, detection (signatures + search) in {seconds:.2f} s")

    assert many.verdict == few.verdict == WATERMARKED and many.model_address == model
    model_few, model_many = _levels(few)["model"], _levels(many)["model"]
    assert (model_many.p_value, model_many.p_family, model_many.z) == (model_few.p_value, model_few.p_family,
                                                                      model_few.z)
    # the verdict's p is the model level's, and that is the p shown beside it, with its family
    assert many.p_family == model_many.p_family == few.p_family and many.corrected_over == "Šidák over 1 model"
    assert many.guess_user == first and many.keys_evaluated == 1 + 100_000
    user_many = _levels(many)["user"]
    assert user_many.compared == 100_000 and user_many.corrected_over == f"Šidák over 100,000 users of model {model}"
    # naming one user among 100,000 takes more evidence: the corrected user p says so, the model verdict stands
    assert user_many.p_family >= _levels(few)["user"].p_family
    assert many.to_json()["corrected_over"] == "Šidák over 1 model"


def test_users_of_other_models_do_not_dilute_a_model_or_its_users(fixed_secret):
    model = identities.add_model("target").address
    users = [identities.add_user(model, f"u{i}").user_address for i in range(3)]
    text, _ = balanced_text(model, users[2])
    before = _levels(detect(text, DetectRequest("ipmark")))
    identities.bulk_add_users(identities.add_model("crowded decoy").address, 5000)
    after = detect(text, DetectRequest("ipmark"))
    levels = _levels(after)
    assert after.flagged and after.user_address == users[2]
    assert levels["model"].compared == 2 and levels["model"].corrected_over == "Šidák over 2 models"
    assert levels["user"].p_family == before["user"].p_family and levels["user"].compared == 3  # not 5,003


def test_pruned_user_search_finds_the_same_user_as_scoring_every_bit(fixed_secret):
    """best_user abandons a key once it cannot win; the winner equals the exhaustive argmax (first on a tie)."""
    cfg = IPMarkConfig()
    model = 1
    for target in (5, 150, 299):
        chosen, _ = select(corpus_sentences(), model, target)
        sigs = sign_text(" ".join(chosen[:14]), cfg.n_bits)
        messages = level_messages(prepare(sigs), model_key(model))[USER]
        users = list(range(1, 301))
        scores = []
        for u in users:
            sem, syn = bits_of(user_key(model, u), messages)
            scores.append(cfg.w_sem * sum(sem) + cfg.w_syn * sum(syn))
        exhaustive = users[max(range(len(users)), key=lambda i: (scores[i], -i))]
        assert best_user(model, users, messages, cfg.w_sem, cfg.w_syn) == exhaustive


def test_a_scan_row_carries_the_p_values_the_verdict_uses(fixed_secret, tmp_path):
    import json

    import pandas as pd

    from backend.corpus.engine import EngineConfig
    from backend.watermark.scan import ScanConfig, scan

    model = identities.add_model("scanned").address
    identities.bulk_add_users(model, 500)
    text, _ = balanced_text(model, 1)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "docs.jsonl").write_text(json.dumps({"id": "marked", "text": text}) + "\n")
    scan(str(corpus), ScanConfig(), EngineConfig(), str(tmp_path / "rows.parquet"))
    row = pd.read_parquet(tmp_path / "rows.parquet").iloc[0]
    found = _levels(detect(text, DetectRequest("ipmark")))
    assert row["verdict"] == WATERMARKED and row["model_address"] == model
    assert row["p_model_corrected"] == found["model"].p_family and row["p_user_corrected"] == found["user"].p_family
    assert pd.isna(row["p_total_corrected"])  # the total decides nothing
