"""The verdict table: every registered method that can judge a text, in one list, each verdict with its meaning."""
import pytest

from backend.errors import UserError
from backend.watermark import demo, identities
from backend.watermark.generation import make_request, run_generation
from backend.watermark.methods import CLEAN, METHODS, WATERMARKED
from backend.watermark.sampling import SamplingConfig
from backend.watermark.verdicts import MEANINGS, verdict_table

TEXT = ("The harbour was quiet in the early morning. Boats rocked gently at their moorings. A gull called from the "
        "pier. The fishermen were already at work on their nets. Later the market opened and the town woke up.")


def test_no_identity_no_model_every_method_is_accounted_for():
    table = verdict_table(TEXT)
    names = {r.method for r in table.rows} | {s.method for s in table.skipped}
    assert names == {m.name for m in METHODS if not m.is_baseline}  # a registered method is never silently left out
    reasons = {s.method: s.reason for s in table.skipped}
    assert "joins when identities exist" in reasons["ipmark"]
    assert "tokenizer" in reasons["kgw"]


def test_identity_based_methods_join_with_identities(writer_handle):
    demo.add_demo()
    table = verdict_table(TEXT, writer_handle)
    rows = {r.method: r for r in table.rows}
    assert {"ipmark", "kgw"} <= set(rows)
    kgw = rows["kgw"]
    assert kgw.scored_unit == "tokens" and kgw.scored > 0 and kgw.keys_compared == 1
    assert "[demo]" not in kgw.identity or kgw.verdict == WATERMARKED
    assert rows["ipmark"].scored_unit == "sentences"
    for row in table.rows:
        assert row.meaning == MEANINGS[row.verdict]
        assert set(row.to_json()) >= {"method", "verdict", "score", "p_value", "tokens_scored", "removed_characters"}
    assert "not proof of human writing" in MEANINGS[CLEAN]


def test_a_kgw_marked_text_is_flagged_in_the_table_and_a_human_one_is_not(writer_handle, monkeypatch):
    # a fixed secret: under a new random one per run, the human text is a false positive at the test's own rate
    monkeypatch.setenv("DASH_WATERMARK_SECRET", "verdict table test secret, fixed")
    model = identities.add_model("table-model")
    sampling = SamplingConfig(max_sentences=6, max_sentence_tokens=48, temperature=1.0, seed=1)
    marked = run_generation(writer_handle, make_request("Write about the sea.", "kgw", model.address, 0, sampling)).text
    rows = {r.method: r for r in verdict_table(marked, writer_handle, model_address=model.address).rows}
    assert rows["kgw"].verdict == WATERMARKED and rows["kgw"].p_value < 1e-4
    assert "model 1" in rows["kgw"].identity
    human = {r.method: r for r in verdict_table(TEXT, writer_handle, model_address=model.address).rows}
    assert human["kgw"].verdict != WATERMARKED


def test_too_long_is_refused_once():
    from backend.watermark.uploads import MAX_CHARS

    with pytest.raises(UserError, match="limit"):
        verdict_table("x" * (MAX_CHARS + 1))
