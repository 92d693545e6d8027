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
    # (under xdist one worker runs them all, with one app server and one Chromium: tests/support/scheduling.py)
    browser_tests = [item for item in items if _is_browser_test(item)]
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
    (Playwright's default of 30 s failed an upload on the MT page with other jobs on the machine).

    Every page opens in one browser context, as a user's tabs do: Playwright's `browser.new_page` makes a fresh
    context each time, with an empty HTTP and compiled-code cache, so every page fetched and compiled Streamlit's
    and Plotly's scripts again (tests/e2e alone on an idle machine: 94-96 s so, 85 s in one context; Chromium's
    rendering of the pages remains most of its CPU). Each page is still its own app session (its own websocket):
    the app keeps nothing in cookies or browser storage."""

    def __init__(self, browser):
        self._browser = browser
        self._context = browser.new_context()

    def new_page(self, viewport: dict | None = None):
        page = self._context.new_page()
        if viewport:
            page.set_viewport_size(viewport)
        page.set_default_timeout(PAGE_TIMEOUT_S * 1000)
        server.count_script_runs(page)  # rerun_after sees every rerun, however quick (else it waits 20 s)
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


# Clicks the Stop of the running work whose label starts with `prefix` (app.ui.run's Stop, keyed "stop-<label>":
# Streamlit gives its element the class "st-key-" + the key with every character outside [a-zA-Z0-9_-] as "-"), in
# the same tick as it finds it; "absent" once the script has ended without showing it. No other Stop ever: a
# drill-down preparation's (keyed "<key>-stop") may be the first on the page, and its click ends other work.
CLICK_WORK_STOP = """prefix => {
    const wanted = "st-key-stop-" + prefix.trim().replaceAll(/[^a-zA-Z0-9_-]/g, "-");
    const holder = [...document.querySelectorAll('[class*="st-key-stop-"]')]
        .find(el => [...el.classList].some(c => c.startsWith(wanted)));
    const stop = holder && [...holder.querySelectorAll("button")].find(b => b.innerText.trim() === "Stop");
    if (stop && !stop.disabled) {
        stop.click();
        return "clicked";
    }
    const idle = document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]')
        && !document.querySelector('[data-stale="true"]');
    return idle ? "absent" : false;
}"""


def click_stop(page, label: str, timeout_s: float = PAGE_TIMEOUT_S) -> bool:
    """Click the Stop of the running work labelled `label` (its start is enough: a label may end with an estimate)
    as soon as it is shown; whether it was (False: the page's script ended first, the work with it). Clicked through
    the DOM: the running box redraws with every progress report, so Playwright's wait for a stable element can
    outlast the run."""
    return page.wait_for_function(CLICK_WORK_STOP, arg=label, timeout=timeout_s * 1000,
                                  polling=50).json_value() == "clicked"


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
