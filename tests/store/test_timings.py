"""backend/store/timings.py: this machine's measured computations, newest first, per verb and model."""
from backend.store.timings import Timing, recent_timings, record_timing


def _timing(work: float, fingerprint: str = "f00d") -> Timing:
    return Timing("demo", "run", fingerprint, work, 2.0 * work, 0.5, 2, 2, 10)


def test_the_newest_timings_of_a_verb_on_a_model_come_first(fresh_store):
    for work in (1.0, 2.0, 3.0):
        record_timing(_timing(work))
    record_timing(_timing(9.0, fingerprint="other"))
    assert [t.work for t in recent_timings("demo", "run", "f00d")] == [3.0, 2.0, 1.0]
    assert recent_timings("demo", "run", "f00d", limit=1) == [_timing(3.0)]
    assert recent_timings("demo", "other-action", "f00d") == []


def test_a_timing_goes_to_the_store_it_was_meant_for(fresh_store, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere.duckdb"
    record_timing(_timing(4.0), elsewhere)  # e.g. recorded after the request, when the settings may have changed
    assert recent_timings("demo", "run", "f00d") == []
    monkeypatch.setenv("DASH_STORE", str(elsewhere))
    assert recent_timings("demo", "run", "f00d") == [_timing(4.0)]
