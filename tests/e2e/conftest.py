"""One app server and one headless Chromium for every browser test of the session, and the helpers they share."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from app import server
from app.server import CHROMIUM, CHROMIUM_FLAGS, AppDidNotStart, running_app

# The embedded model computes a page's default action for real: allow it minutes, not seconds.
PAGE_TIMEOUT_S = 900 if os.environ.get("DASH_E2E_REAL_MODEL") == "1" else 180


def _is_browser_test(item) -> bool:
    return "tests/e2e/" in str(item.fspath).replace(os.sep, "/")


def pytest_collection_modifyitems(items):
    browser_tests = [item for item in items if _is_browser_test(item)]
    for item in browser_tests:  # under xdist: one worker runs them all, with one app server and one Chromium
        item.add_marker(pytest.mark.xdist_group("browser"))
    if Path(CHROMIUM).exists() or os.environ.get("CI") == "true":
        return
    skip = pytest.mark.skip(reason="Debian chromium is not installed (CI installs it)")
    for item in browser_tests:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def app_url():
    with open(Path(tempfile.gettempdir()) / f"streamlit-e2e-{os.getpid()}.log", "w") as log:
        try:
            with running_app(log=log, start_timeout_s=120) as (url, _):
                yield url
        except AppDidNotStart as exc:
            pytest.fail(str(exc))


class PatientBrowser:
    """The session's Chromium, whose pages wait for an element or an action as long as a page may take to run
    (Playwright's default of 30 s failed an upload on the MT page with other jobs on the machine)."""

    def __init__(self, browser):
        self._browser = browser

    def new_page(self, **options):
        page = self._browser.new_page(**options)
        page.set_default_timeout(PAGE_TIMEOUT_S * 1000)
        return page

    def __getattr__(self, name):
        return getattr(self._browser, name)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        yield PatientBrowser(browser)
        browser.close()


@dataclass
class Tab:
    """A browser tab that stays open across tests and reaches pages by their sidebar links, as a user does."""
    page: object
    slug: str = ""  # the page it shows ("" for Home)

    def show(self, slug: str) -> None:
        if slug != self.slug:
            server.visit_by_sidebar(self.page, slug, PAGE_TIMEOUT_S)
            self.slug = slug


def wait_until_idle(page, timeout_s: float = PAGE_TIMEOUT_S) -> None:
    """Wait until the page's script (including its default computation) has finished running."""
    server.wait_until_idle(page, timeout_s)


def rerun_after(page, action, timeout_s: float = PAGE_TIMEOUT_S) -> None:
    """Do `action` (a click, a key press, an upload) and wait until the rerun it causes has finished."""
    server.rerun_after(page, action, timeout_s)


def click_chart_point(page, x: float, y: float, timeout_s: float = PAGE_TIMEOUT_S) -> None:
    """Hover the chart point at (x, y) until Plotly picks it, click it, and wait for the rerun of the selection."""
    server.click_chart_point(page, x, y, timeout_s)


def open_tab(page, name: str, timeout_s: float = PAGE_TIMEOUT_S) -> None:
    """Open a tab: a click on another tab reruns the page, which only then draws that tab's body (app/ui/tabs.py);
    a click on the open one does nothing."""
    tab = page.get_by_role("tab", name=name)
    if tab.get_attribute("aria-selected") == "true":
        wait_until_idle(page, timeout_s)
    else:
        rerun_after(page, tab.click, timeout_s)


def click_stop(page) -> bool:
    """Click the running work's Stop through the DOM, if it is shown; whether it was. (The running box redraws its
    Stop with every progress report, so Playwright's wait for a stable element can outlast the run.)"""
    # the page's running work first (app.ui.run's Stop, key "stop-<label>"): a drill-down preparation running in the
    # background beside it has a Stop of its own, which may come first on the page
    return page.evaluate("""() => {
        const stops = [...document.querySelectorAll("button")].filter(b => b.innerText.trim() === "Stop");
        const work = stops.find(b => [...(b.closest('[class*="st-key-stop-"]')?.classList || [])]
            .some(c => c.startsWith("st-key-stop-")));
        const stop = work || stops[0];
        if (stop) stop.click();
        return Boolean(stop);
    }""")


def start_long_batch(app_url: str, browser, width: int, height: int):
    """A new page on Decoding that has just clicked "Run batch" on 200 problems (long enough on the tiny model to be
    seen running); returns the page."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{app_url}/decoding")
    wait_until_idle(page)
    page.get_by_text("Parameters and budgets").click()
    tokens = page.get_by_role("spinbutton", name="Max new tokens")
    tokens.fill("4")  # the tiny test models' context holds the problems with a few new tokens
    rerun_after(page, lambda: tokens.press("Enter"))
    open_tab(page, "Batch & budgets")
    problems = page.get_by_role("spinbutton", name="Problems")
    problems.fill("200")
    rerun_after(page, lambda: problems.press("Enter"))
    page.get_by_role("button", name="Run batch").click()
    return page
