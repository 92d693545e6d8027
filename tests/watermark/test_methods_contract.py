"""The contract every registered watermark method honours (a new method is tested by being registered):
embedding on the tiny writer then detecting scores stronger than the unwatermarked baseline text of the
same seed, empty or short text gives a clear verdict or a UserError, and the flags mean what they say."""
import dataclasses

import pytest

from backend.errors import UserError
from backend.params import Config
from backend.watermark.evaluation import EvalConfig
from backend.watermark.generation import GenerateRequest, make_request, run_generation
from backend.watermark.methods import (BASELINE, MARKS, METHODS, TOO_SHORT, WATERMARKED, DetectRequest, detect,
                                       watermark_names)
from backend.watermark.sampling import SamplingConfig

SAMPLING = SamplingConfig(max_sentences=6, max_sentence_tokens=48, temperature=1.0, seed=3)
PROMPT = "Write about the harbour town."


def request_for(method, model: int, user: int, handle) -> DetectRequest:
    """What a caller passes, read from the method's flags."""
    return DetectRequest(method.name, model_address=model, user_address=user if method.identifies_users else 0,
                         handle=handle if method.needs_model_to_detect else None)


def test_the_baseline_is_registered_and_every_other_method_detects():
    baseline = METHODS.get(BASELINE)
    assert baseline.is_baseline and baseline.config is None and not baseline.identifies_users
    assert BASELINE not in watermark_names() and len(watermark_names()) >= 2
    assert set(watermark_names()) | {BASELINE} == set(METHODS.names())


@pytest.mark.parametrize("name", watermark_names())
def test_config_lives_in_the_requests(name):
    """A method's config is a params-declared Config; the generation and evaluation configs carry it."""
    method = METHODS.get(name)
    assert method.config is not None and issubclass(method.config, Config)
    for holder in (GenerateRequest("p", name), EvalConfig()):
        assert isinstance(method.config_in(holder), method.config)
    assert {f.name for f in dataclasses.fields(GenerateRequest)} >= {method.field}


@pytest.mark.parametrize("name", watermark_names())
def test_embedded_text_scores_stronger_than_the_baseline(fixed_secret, name, writer_handle, identity):
    method = METHODS.get(name)
    model, users = identity
    marked = run_generation(writer_handle, make_request(PROMPT, name, model, users[0], SAMPLING))
    plain = run_generation(writer_handle, make_request(PROMPT, BASELINE, model, users[0], SAMPLING))
    assert marked.text and plain.text and marked.text != plain.text
    hit = detect(marked.text, request_for(method, model, users[0], writer_handle))
    miss = detect(plain.text, request_for(method, model, users[0], writer_handle))
    assert hit.method == name and hit.score > miss.score, (hit.score, miss.score)
    assert not miss.flagged and miss.model_address == 0
    assert hit.pieces and {mark for _, mark, _ in hit.pieces} <= {"", *MARKS}  # what the page highlights
    if hit.flagged and not method.identity_free:
        assert hit.model_address == model
    if method.identity_free:  # its keys are settings: no identity is named
        assert hit.model_address == 0 and hit.guess_model == 0
    if not method.identifies_users:
        assert hit.user_address == 0 and hit.guess_user == 0


@pytest.mark.parametrize("name", watermark_names())
@pytest.mark.parametrize("text", ["", "   ", "Hi.", "One short line"])
def test_empty_or_short_text_gives_a_clear_result(name, text, writer_handle, identity):
    method = METHODS.get(name)
    model, users = identity
    try:
        found = detect(text, request_for(method, model, users[0], writer_handle))
    except UserError:
        return
    assert found.verdict == TOO_SHORT and not found.flagged and found.verdict != WATERMARKED


@pytest.mark.parametrize("name", watermark_names())
def test_needs_model_to_detect_is_honoured(name, identity):
    """A method that needs the model refuses without it (UserError); one that does not, works without it."""
    method = METHODS.get(name)
    model, users = identity
    request = DetectRequest(name, model_address=model, user_address=users[0])
    if method.needs_model_to_detect:
        with pytest.raises(UserError):
            detect("Some text. More of it here.", request)
    else:
        assert detect("Some text. More of it here.", request).verdict == TOO_SHORT


def test_unknown_method_is_a_user_error():
    with pytest.raises(UserError):
        DetectRequest("magic")
    with pytest.raises(UserError):
        make_request(PROMPT, "magic")
