"""The running verdict: the method's own detection on the text so far, ending on the finished text's verdict."""
import pytest

from backend.watermark.generation import PartialGeneration, make_request, run_generation
from backend.watermark.methods import BASELINE, METHODS, TOO_SHORT, DetectRequest, detect
from backend.watermark.running import detect_request, running_verdict
from backend.watermark.sampling import SamplingConfig

SAMPLING = SamplingConfig(max_sentences=4, max_sentence_tokens=48, temperature=1.0, seed=5)
PROMPT = "Write about the harbour town."


@pytest.mark.parametrize("method", ["kgw", "ipmark"])
def test_each_sentence_gets_the_verdict_of_the_text_so_far(fixed_secret, writer_handle, identity, method):
    model, users = identity
    request = make_request(PROMPT, method, model, users[0], SAMPLING)
    verdicts = []
    done = run_generation(writer_handle, request,
                          on_partial=lambda p: verdicts.append((p, running_verdict(p, request, writer_handle))))
    assert [v.sentences for _, v in verdicts] == list(range(1, len(done.sentences) + 1))
    for partial, verdict in verdicts:  # each is the method's detection of exactly the text shown with it
        found = detect(partial.text, detect_request(request, writer_handle))
        assert (verdict.verdict, verdict.z, verdict.p_value) == (found.verdict, found.z, found.p_family)
        line = verdict.line()
        assert line.startswith(f"after {verdict.sentences} sentence") and found.verdict in line
        if found.z is not None:  # stated once, whichever part states it
            assert line.count("z = ") == 1 and f"z = {found.z:.2f}" in line
    final = detect(done.text, detect_request(request, writer_handle))
    assert (verdicts[-1][1].verdict, verdicts[-1][1].z) == (final.verdict, final.z)


def test_the_request_detects_with_the_generation_settings(identity):
    model, users = identity
    request = make_request(PROMPT, "kgw", model, users[0], SAMPLING)
    asked = detect_request(request, handle="the model")
    assert isinstance(asked, DetectRequest) and asked.method == "kgw"
    assert (asked.model_address, asked.user_address, asked.config, asked.handle) == (model, 0, request.kgw, "the model")
    ipmark = detect_request(make_request(PROMPT, "ipmark", model, users[1], SAMPLING), handle="the model")
    assert (ipmark.user_address, ipmark.handle) == (users[1], None)  # IPMark reads the text alone


def test_a_text_too_short_to_judge_says_so_instead_of_failing(writer_handle):
    synthid = next(m for m in METHODS if m.name == "synthid")
    request = make_request(PROMPT, synthid.name, sampling=SAMPLING)
    partial = PartialGeneration(synthid.name, "Hi.", (), 1, 4)
    verdict = running_verdict(partial, request, writer_handle)
    assert verdict.verdict in ("", TOO_SHORT) and verdict.evidence
    assert "no verdict yet" in verdict.line() or TOO_SHORT in verdict.line()


def test_the_baseline_has_no_running_verdict(writer_handle):
    request = make_request(PROMPT, BASELINE, sampling=SAMPLING)
    assert running_verdict(PartialGeneration(BASELINE, "A text.", (), 1, 4), request, writer_handle) is None
