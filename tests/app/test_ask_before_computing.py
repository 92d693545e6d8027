"""AppTest: a page's automatic computation that is known to take long asks first, says how long, and the
button computes it; a stored result or work never measured here (only calibrated) runs as before."""
import duckdb
import pytest

from backend.models import default_model_id, load
from backend.store.db import release
from tests.app.helpers import plotly_charts, run_page, stop_background_runs

pytestmark = pytest.mark.asks_before_computing  # the product's threshold (tests/app/conftest.py)


def _pretend_earlier_runs_took(seconds: float, feature: str, action: str, work: float) -> None:
    """An earlier run of this action on the test model, of `work` units (the page's request's), that took
    `seconds` on an idle machine here."""
    from backend.store.timings import Timing, record_timing

    fingerprint = load(default_model_id()).fingerprint
    record_timing(Timing(feature, action, fingerprint, work, seconds, 1.0, 1, 2, 0))


def test_a_long_computation_waits_for_the_button_that_says_how_long(monkeypatch, tmp_path):
    from backend.estimates import expected
    from backend.estimates.load import CpuLoad
    from backend.estimates.work import work_of
    from backend.fp8.bounds import BoundsConfig

    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    monkeypatch.setattr(expected, "current_load", lambda nice=None: CpuLoad(1.0, 1, 2, 0))  # an idle machine
    _pretend_earlier_runs_took(120.0, "fp8", "bounds", work_of("fp8", "bounds").units(None, BoundsConfig()))
    at = run_page("fp8_bounds.py")
    assert not plotly_charts(at), "nothing is computed before the click"
    assert any("about 2 min" in i.value for i in at.info)
    button = next(b for b in at.button if b.label.startswith("Compute (about 2 min"))
    button.click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(plotly_charts(at)) == 2, "the click computes the page's figures (heatmap, per-layer bounds)"
    at.run()  # now stored: shown at once, no button
    assert len(plotly_charts(at)) == 2 and not any(b.label.startswith("Compute (") for b in at.button)


def test_work_never_measured_here_computes_with_progress(monkeypatch, tmp_path):
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))
    at = run_page("fp8_bounds.py")
    assert len(plotly_charts(at)) == 2 and not any(b.label.startswith("Compute (") for b in at.button)
    fingerprint = load(default_model_id()).fingerprint  # the store also holds the shipped rows of the embedded model
    stop_background_runs()  # the heads' drill-downs prepared after the map: nothing writes while the file is read
    release()  # this process's open connection: the file is read as another process would
    with duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM artifacts WHERE feature = 'fp8' AND action = 'bounds' "
                           "AND fingerprint = ?",
                           [fingerprint]).fetchone()[0] == 1
