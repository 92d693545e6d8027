"""Real browser: start the app on a free localhost port, open every page in headless Chromium,
check it renders with no exception box, and, with $DASH_SCREENSHOT_DIR set, take a screenshot of each page
(the README's come from `make screenshots`, which runs this test on the embedded model).

One tab opens Home by its URL and reaches every other page by its sidebar link, as a user does: a new tab per page
would load and compile Streamlit's and Plotly's code again each time (the hostile-text tests open pages by URL).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app import server
from app.views import FEATURES, HOME, TOOLS
from tests.e2e.conftest import Tab, wait_until_idle


@pytest.fixture(scope="module")
def tab(app_url, browser):
    # Streamlit scrolls inside its own container, so a full-page shot is the viewport: make it tall
    # enough to show a page's first results and plots.
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(app_url)
    wait_until_idle(page)
    page.wait_for_selector("h1", timeout=60_000)
    yield Tab(page)
    page.close()


SHOTS = Path(__file__).resolve().parents[2] / "assets" / "screenshots"
# What a page's first view is made of, whatever the model: its headings and tab labels, in order.
OUTLINE_JS = ("() => [...document.querySelectorAll('[data-testid=\"stMain\"] :is(h1, h2, h3, [role=\"tab\"])')]"
              ".map(e => (e.getAttribute('role') === 'tab' ? 'tab' : e.tagName.toLowerCase()) + ': ' + "
              "e.innerText.trim()).filter(line => !line.endsWith(': '))")


def outline_file(view) -> Path:
    return SHOTS / f"{view.script.removesuffix('.py')}.outline.json"


@pytest.mark.parametrize("view", [HOME, *FEATURES, *TOOLS], ids=lambda v: v.title)
def test_page_renders_without_exception(tab, view):
    tab.show("" if view is HOME else view.url_path)
    page = tab.page
    wait_until_idle(page)  # the outline below is the finished page's
    server.wait_for_charts(page, 60)  # plotly draws after the script has finished
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")[:2000]
    assert view.title.split()[0].lower() in page.inner_text("h1").lower() or view is HOME
    outline = page.evaluate(OUTLINE_JS)
    if os.environ.get("DASH_SCREENSHOT_DIR"):  # `make screenshots`: a PNG encode of a tall page costs the suite CPU
        shots = Path(os.environ["DASH_SCREENSHOT_DIR"])
        shots.mkdir(parents=True, exist_ok=True)
        page.evaluate("document.fonts.ready.then(() => true)")  # the picture's text in the page's own fonts
        page.screenshot(path=str(shots / f"{view.script.removesuffix('.py')}.png"), full_page=True)
        (shots / outline_file(view).name).write_text(json.dumps(outline, indent=1, ensure_ascii=False) + "\n")
    else:  # the README's picture of this page shows what the page shows now, or `make screenshots` is due
        recorded = json.loads(outline_file(view).read_text()) if outline_file(view).exists() else None
        assert outline == recorded, (f"{view.title}: the page's headings and tabs differ from those recorded with its "
                                     f"README screenshot ({outline_file(view).name}); retake the pictures with "
                                     f"`make screenshots`. Now: {outline}; recorded: {recorded}")


@pytest.mark.skipif(os.environ.get("DASH_E2E_REAL_MODEL") != "1",
                    reason="the first view is chosen on the embedded reasoner's benchmark (make screenshots runs it)")
def test_decoding_first_view_is_labelled_beside_the_stored_aggregate(app_url, browser):
    """On the embedded reasoner the Decoding page opens on the benchmark problem chosen for illustration, says so,
    and shows the benchmark's aggregate (accuracy with Wilson intervals, p95 latency) beside the two runs."""
    view = next(v for v in FEATURES if v.script == "decoding.py")
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(f"{app_url}/{view.url_path}")
    wait_until_idle(page)
    server.wait_for_charts(page, 60)  # tables and charts load their code after the script has run
    body = page.inner_text("body")
    assert "Chosen for illustration" in body, body[:2000]
    assert "The stored benchmark, every problem (160 problems" in body  # its table is drawn on a canvas
    assert page.locator('[data-testid="stDataFrame"]').count() >= 2  # the aggregate and the runs table
    assert "Forty-five marbles" in body  # hand-written one-step problem #3
    page.close()


def test_an_export_is_made_on_the_click(tab):
    """Exports are deferred (made when clicked, not on every run of the page): the browser still gets the file."""
    tab.show("runs")
    with tab.page.expect_download(timeout=60_000) as download:
        tab.page.get_by_role("button", name="Export CSV").first.click()
    path = download.value.path()
    assert Path(path).read_text().splitlines()[0].startswith("run_id,")
