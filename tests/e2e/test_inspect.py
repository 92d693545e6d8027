"""Real browser: "Inspect this prompt" on Disagreement opens Inspect on that question with a result; on the
attribution map a click on a head opens its drill-down (pattern, promoted and suppressed tokens)."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from app import server
from tests.e2e.conftest import PAGE_TIMEOUT_S, open_tab, wait_until_idle


@pytest.fixture(scope="module")
def page(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(f"{app_url}/disagreement")
    wait_until_idle(page)
    yield page
    page.close()


def test_inspect_this_prompt_then_click_a_head(page):
    question = page.locator('[data-testid="stMarkdownContainer"] strong').filter(has_text="?").first.inner_text()
    page.get_by_role("button", name="Inspect this prompt").click()
    page.wait_for_function("document.querySelector('h1') && document.querySelector('h1').textContent"
                           ".includes('Inspect')", timeout=PAGE_TIMEOUT_S * 1000)
    wait_until_idle(page)
    server.wait_for_charts(page, 60)
    assert page.get_by_role("textbox", name="Prompt").input_value() == question
    assert "The model predicts" in page.inner_text("body")
    assert page.locator('[data-testid="stException"]').count() == 0

    open_tab(page, "Direct logit attribution")
    server.wait_for_charts(page, 60)
    assert "Click a head on the map" in page.inner_text("body")
    square = page.locator(".js-plotly-plot").first.locator("g.scatterlayer path.point").nth(5)  # layer 1, head 1
    box = square.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    time.sleep(0.3)  # Plotly picks the point under the pointer on hover, then selects it on the click
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("document.body.innerText.includes('Promoted')", timeout=PAGE_TIMEOUT_S * 1000)
    wait_until_idle(page)
    server.wait_for_charts(page, 60)
    body = page.inner_text("body")
    assert "Head L" in body and "Promoted" in body and "Suppressed" in body
    assert page.locator('[data-testid="stDataFrame"]').count() >= 2
    assert page.locator('[data-testid="stException"]').count() == 0
    if os.environ.get("DASH_SCREENSHOT_DIR"):  # `make screenshots`: the README's picture of a drill-down open
        page.screenshot(path=str(Path(os.environ["DASH_SCREENSHOT_DIR"]) / "inspect_drilldown.png"), full_page=True)


def test_a_shared_link_and_a_reload_reopen_the_prompt_and_tab(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{app_url}/inspect")
    wait_until_idle(page)
    box = page.get_by_role("textbox", name="Prompt")
    box.fill("A river flows into the")
    box.press("Control+Enter")  # a text area commits its text on Ctrl+Enter (or on leaving it)
    wait_until_idle(page)
    open_tab(page, "Attention")
    page.wait_for_function("location.search.includes('inspect-tabs=Attention') && "
                           "location.search.includes('inspect-prompt=A')", timeout=60_000)
    link = page.url

    def shows_the_view(view) -> None:
        wait_until_idle(view)
        server.wait_for_charts(view, 60)
        assert view.get_by_role("textbox", name="Prompt").input_value() == "A river flows into the"
        assert view.get_by_role("tab", name="Attention").get_attribute("aria-selected") == "true"
        assert "tokens:" in view.inner_text("body") and view.locator('[data-testid="stException"]').count() == 0

    page.reload()
    shows_the_view(page)
    server.visit_by_sidebar(page, "fp8_bounds", PAGE_TIMEOUT_S)  # away and back by the sidebar, as a user does
    server.visit_by_sidebar(page, "inspect", PAGE_TIMEOUT_S)
    shows_the_view(page)
    page.close()
    shared = browser.new_page(viewport={"width": 1400, "height": 1600})  # a new browser session opening the link
    shared.goto(link)
    shows_the_view(shared)
    shared.close()
