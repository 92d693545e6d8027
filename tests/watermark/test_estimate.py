"""A generation's expected time: measured with a few kernel steps when it never ran here, then from the store's
earlier runs of the same method and candidate count."""
import pytest

from backend.watermark.estimate import candidates_in, expected_seconds
from backend.watermark.generation import generate, make_request
from backend.watermark.sampling import SamplingConfig


def test_measured_first_then_from_earlier_runs(writer_handle, identity):
    first = expected_seconds(writer_handle, "kgw", 1, 4)
    assert first.seconds > 0 and first.basis.startswith("measured now")
    model, _ = identity
    request = make_request("Write about the sea.", "kgw", model, 0,
                           SamplingConfig(max_sentences=2, max_sentence_tokens=24, seed=0))
    done = generate(writer_handle, request)
    later = expected_seconds(writer_handle, "kgw", 1, 4)
    assert later.basis.startswith("median of 1 earlier run")
    assert later.seconds == pytest.approx(done.seconds / 2 * 4)  # seconds per requested sentence, scaled
    assert expected_seconds(writer_handle, "ipmark", 4, 4).basis.startswith("measured now")  # not mixed in


def test_candidates_per_sentence_come_from_the_method_not_its_name():
    assert candidates_in({"method": "ipmark", "ipmark": {"n_candidates": 4}}) == 4
    assert candidates_in({"method": "kgw", "ipmark": {"n_candidates": 4}}) == 1  # kgw ranks no candidates
    assert candidates_in({"method": "gone-method"}) == 1  # a stored run of a method no longer registered
