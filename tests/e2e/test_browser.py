"""Real browser: start the app on a free localhost port, open every page in headless Chromium,
check it renders with no exception box, and take a screenshot of each page.

Screenshots go to $DASH_SCREENSHOT_DIR (the README's come from `make screenshots`, which runs this
test on the embedded model), else to a temporary folder.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from app.server import CHROMIUM, CHROMIUM_FLAGS, AppDidNotStart, running_app
from app.views import FEATURES, HOME, TOOLS

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists() and os.environ.get("CI") != "true",
                                reason="Debian chromium is not installed (CI installs it)")


@pytest.fixture(scope="module")
def app_url():
    with open(Path(tempfile.gettempdir()) / f"streamlit-e2e-{os.getpid()}.log", "w") as log:
        try:
            with running_app(log=log, start_timeout_s=120) as (url, _):
                yield url
        except AppDidNotStart as exc:
            pytest.fail(str(exc))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        yield browser
        browser.close()


# The embedded model computes a page's default action for real: allow it minutes, not seconds.
PAGE_TIMEOUT_S = 900 if os.environ.get("DASH_E2E_REAL_MODEL") == "1" else 180


def _wait_until_idle(page, timeout_s: float = PAGE_TIMEOUT_S) -> None:
    """Wait until the page's script (including its default computation) has finished running."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_s * 1000)
    time.sleep(1.0)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           state="attached", timeout=timeout_s * 1000)


# Pages whose first tab waits for a button: the screenshot shows the tab that computes on its own.
SCREENSHOT_TAB = {"watermark.py": "Detect"}


@pytest.mark.parametrize("view", [HOME, *FEATURES, *TOOLS], ids=lambda v: v.title)
def test_page_renders_without_exception(app_url, browser, view):
    # Streamlit scrolls inside its own container, so a full-page shot is the viewport: make it tall
    # enough to show a page's first results and plots.
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    slug = "" if view is HOME else view.url_path
    page.goto(f"{app_url}/{slug}")
    _wait_until_idle(page)
    page.wait_for_selector("h1", timeout=60_000)
    if view.script in SCREENSHOT_TAB:
        page.get_by_role("tab", name=SCREENSHOT_TAB[view.script]).click()
    # plotly draws after the script has finished: every chart on screen must have its SVG
    page.wait_for_function("Array.from(document.querySelectorAll('.js-plotly-plot'))"
                           ".every(plot => plot.querySelector('.main-svg'))", timeout=60_000)
    time.sleep(1.0)
    assert page.locator('[data-testid="stException"]').count() == 0, page.inner_text("body")[:2000]
    assert view.title.split()[0].lower() in page.inner_text("h1").lower() or view is HOME
    shots = Path(os.environ.get("DASH_SCREENSHOT_DIR", tempfile.gettempdir()))
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{view.script.removesuffix('.py')}.png"), full_page=True)
    page.close()


PAYLOAD = ("Hi there, this is a pasted paragraph.\n\n![t](http://tracker.invalid/x.gif) and "
           "[link](http://tracker.invalid/) <img src=http://tracker.invalid/y.gif> ok.")


def test_pasted_text_is_shown_as_text_and_fetches_nothing(app_url, browser):
    """The probe's payload on the Watermark Detect tab: no request may leave the app, the text shows literally.
    Every non-local request is aborted by the route below, so nothing leaves the machine even on failure."""
    page = browser.new_page(viewport={"width": 1400, "height": 1800})
    outside: list[str] = []

    def guard(route):
        if route.request.url.startswith(app_url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    page.goto(f"{app_url}/watermark")
    _wait_until_idle(page)
    page.get_by_role("tab", name="Detect").click()
    area = page.get_by_label("Paste text to check")
    area.fill(PAYLOAD)
    area.press("Control+Enter")
    time.sleep(1.0)
    _wait_until_idle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert not outside, outside
    body = page.inner_text("body")
    assert "![t](http://tracker.invalid/x.gif)" in body and "<img src=http://tracker.invalid/y.gif>" in body
    page.close()
