"""A generation's expected time: calibrated with a probe forward when it never ran here, then from the store's
earlier generations on this model, scaled by the requested sentences and candidates."""
from backend.estimates import expected
from backend.estimates.load import CpuLoad
from backend.watermark.estimate import expected_seconds
from backend.watermark.generation import generate, make_request
from backend.watermark.sampling import SamplingConfig


def test_calibrated_first_then_from_earlier_runs_and_scaled_by_the_request(fresh_store, writer_handle, identity,
                                                                           monkeypatch):
    monkeypatch.setattr(expected, "current_load", lambda nice=None: CpuLoad(1.0, 1, 2, 0))  # the same load for all
    first = expected_seconds(writer_handle, "kgw", 1, 4)
    assert first.seconds > 0 and first.basis.startswith("calibrated")
    model, _ = identity
    request = make_request("Write about the sea.", "kgw", model, 0,
                           SamplingConfig(max_sentences=2, max_sentence_tokens=24, seed=0))
    generate(writer_handle, request)
    later = expected_seconds(writer_handle, "kgw", 1, 4)
    assert later.runs == 1 and "1 earlier run" in later.basis
    shorter, longer = expected_seconds(writer_handle, "kgw", 1, 2), expected_seconds(writer_handle, "kgw", 1, 8)
    assert shorter.seconds < later.seconds < longer.seconds  # more sentences: more time (on the same load)
    one_row = expected_seconds(writer_handle, "ipmark", 1, 4)
    eight_rows = expected_seconds(writer_handle, "ipmark", 8, 4)
    assert eight_rows.seconds > one_row.seconds  # IPMark decodes its candidates as a batch
