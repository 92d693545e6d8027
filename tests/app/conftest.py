"""AppTest fixtures: a page's automatic computation runs, whatever earlier tests' timings were.

The pages ask before an automatic computation that took `ASK_OVER_S` or more on this model before
(app/ui/run.py), using the durations recorded in the store. Earlier tests record real durations in the
session store, so under CPU load (a tiny model's NAG ranking took 35 s beside other jobs) a page that is
expected to compute showed the "Compute (about 35 s)" button instead, and the test failed. The tests of
the pages do not ask; tests/app/test_ask_before_computing.py (marked `asks_before_computing`) keeps the
product's threshold and sets the earlier durations it needs itself.
"""
from __future__ import annotations

import pytest

from tests.app.helpers import stop_background_runs


@pytest.fixture(scope="session", autouse=True)
def components_scanned_once():
    """Every AppTest's first run scans all installed distributions' metadata for Streamlit components (about 0.2 CPU
    seconds: 134 AppTests cost 28 CPU seconds so). What is installed does not change during the run: one scan per
    process, as the real server does once at start-up."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    found = scan()
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(found)
    yield
    manifest_scanner.scan_component_manifests = scan


@pytest.fixture(autouse=True)
def never_ask_unless_marked(request, monkeypatch):
    from app.ui import run

    if request.node.get_closest_marker("asks_before_computing") is None:
        monkeypatch.setattr(run, "ASK_OVER_S", run.NEVER_ASK)  # pages read it from the module at each run


@pytest.fixture
def exposed():
    """The server listens on every interface (make run DASH_ADDRESS=0.0.0.0): the page treats its user as remote."""
    from streamlit import config

    before = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    yield
    config.set_option("server.address", before)



@pytest.fixture(autouse=True)
def background_runs_end_with_the_test():
    """A page's background work (a map's drill-downs prepared after it) belongs to its browser session, which ends
    with the test: stopped here, so it neither competes for the CPU with the next tests nor writes to a store the
    next test reads."""
    yield
    stop_background_runs()
