"""Model-free detection: attribution by hierarchical retrieval, agreement with the flat scan, states."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.watermark import identities
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.ipmark.detect import (CLEAN, EMPTY_REGISTRY, TOO_SHORT, WATERMARKED, detect, detect_signed,
                                            strip_prompt)
from backend.watermark.oracle import corpus_sentences, select
from backend.watermark.signatures import sign_text


def balanced_text(model: int, user: int, per_level: int = 8) -> tuple[str, list[str]]:
    """Watermarked corpus sentences, `per_level` of each level. The level split depends on the secret: callers
    use the `fixed_secret` fixture, under which the corpus has enough of both."""
    chosen, rest = select(corpus_sentences(), model, user)
    rows = detect(" ".join(chosen)).sentences
    picked = [r.text for r in rows if r.level == "model"][:per_level] + \
        [r.text for r in rows if r.level == "user"][:per_level]
    assert len(picked) == 2 * per_level, f"the corpus has {len(picked)} of {2 * per_level} sentences under this secret"
    return " ".join(picked), rest


@pytest.fixture
def crowd(identity):
    """The identity fixture plus two decoy models with 20 users each."""
    for name in ("decoy-a", "decoy-b"):
        identities.bulk_add_users(identities.add_model(name).address, 20)
    return identity


def test_watermarked_text_is_attributed_to_model_and_user(fixed_secret, crowd):
    model, users = crowd
    text, rest = balanced_text(model, users[1])
    report = detect(text)
    assert report.verdict == WATERMARKED
    assert (report.model_address, report.user_address) == (model, users[1])
    assert report.model_name == "test-model" and report.user_label == "user 1"
    assert report.model_level.score == report.model_level.n_bits * 0.5  # every counted bit is 1
    assert report.total.p_value < 1e-6 and report.total.z > 4
    assert all(r.sem_bit == 1 and r.syn_bit == 1 for r in report.sentences if r.usable)
    flat = detect(text, method="flat")
    # the same identity; the flat scan compares every user key (43 here, against 3 for the hierarchical
    # search), so its corrected user-level p is larger and may not name the user on 8 user sentences
    assert (flat.model_address, flat.guess_user_address) == (model, users[1])
    assert flat.user_level.compared == 43 > report.user_level.compared
    assert report.keys_evaluated < flat.keys_evaluated
    clean = detect(" ".join(rest[:12]))
    assert clean.verdict == CLEAN
    assert clean.detection_score < report.detection_score


def test_too_short_and_empty_registry_states(identity):
    model, users = identity
    chosen, _ = select(corpus_sentences(), model, users[0])
    short = detect(" ".join(chosen[:3]))
    assert short.verdict == TOO_SHORT and short.n_usable == 3
    assert short.total is not None  # the evidence is still reported


def test_no_identities(tmp_path):
    assert detect("One two three four. Five six seven eight. Nine ten eleven. Twelve thirteen fourteen.").verdict \
        == EMPTY_REGISTRY


def test_prompt_is_stripped():
    assert strip_prompt("Tell me a story. Once upon a time.", "Tell me a story.").strip() == "Once upon a time."
    assert strip_prompt("abc", None) == "abc"


@pytest.mark.parametrize("text", ["", "   ", "Hello.", "?!... ;;; ---", "\x00\x01\x02", "日本語の文です。これは二つ目の文です。",
                                  "Это первое предложение здесь. Это второе предложение тоже.", "🙂" * 500,
                                  "word " * 5000])
def test_bad_input_gives_a_state_not_an_exception(identity, text):
    report = detect(text)
    assert report.verdict in (TOO_SHORT, CLEAN, WATERMARKED)
    assert len(report.sentences) == report.n_sentences


@settings(max_examples=15, deadline=None)
@given(st.text(max_size=200))
def test_detector_never_raises_on_arbitrary_unicode(text):
    """Segmentation, signatures and retrieval on any Unicode (registry given in memory: no store per example)."""
    cfg = IPMarkConfig()
    report = detect_signed(sign_text(text, cfg.n_bits), cfg, users={1: [1, 2], 2: [1]}, names={1: "a", 2: "b"})
    assert report.verdict in (TOO_SHORT, CLEAN, WATERMARKED)


def test_the_report_keeps_each_sentences_signature():
    """What a sentence's drill-down shows (its semantic bits, skeleton, margin) is kept on the report, one per
    sentence row, in the rows' order: a click reads it instead of signing the sentence again."""
    cfg = IPMarkConfig()
    text = ("The river bends twice before it reaches the town. Nobody remembers who built the old bridge. "
            "Short one. The market opens early on Saturdays in summer.")
    sigs = sign_text(text, cfg.n_bits)
    report = detect_signed(sigs, cfg, users={1: [1]}, names={1: "a"})
    assert report.signatures == tuple(sigs)
    assert [s.text for s in report.signatures] == [r.text for r in report.sentences]
