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

from app.views import FEATURES, HOME, TOOLS
from tests.e2e.conftest import wait_until_idle


# Pages whose first tab waits for a button: the screenshot shows the tab that computes on its own.
SCREENSHOT_TAB = {"watermark.py": "Detect"}


@pytest.mark.parametrize("view", [HOME, *FEATURES, *TOOLS], ids=lambda v: v.title)
def test_page_renders_without_exception(app_url, browser, view):
    # Streamlit scrolls inside its own container, so a full-page shot is the viewport: make it tall
    # enough to show a page's first results and plots.
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    slug = "" if view is HOME else view.url_path
    page.goto(f"{app_url}/{slug}")
    wait_until_idle(page)
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
