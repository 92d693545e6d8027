"""Decoding side by side streams its columns: each strategy's column is on screen as soon as it finishes (greedy
first), while the next one still runs with its own progress and Stop; a Stop keeps the finished columns, marked as a
partial comparison. Everything waits on what the page shows, never on a clock."""
from __future__ import annotations

from tests.e2e.conftest import PAGE_TIMEOUT_S, wait_until_idle


def _number(page, label: str, value: int) -> None:
    field = page.get_by_role("spinbutton", name=label)
    field.fill(str(value))
    field.press("Enter")
    wait_until_idle(page)


def test_finished_strategies_show_before_the_last_one_ends_and_a_stop_keeps_them(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{app_url}/decoding")
    wait_until_idle(page)
    page.get_by_text("Own prompt").click()  # a short prompt: room in the tiny models' context for long decodes
    wait_until_idle(page)
    page.get_by_text("Parameters and budgets").click()
    _number(page, "Max new tokens", 150)
    _number(page, "MH block size B", 1)
    _number(page, "MH steps K per block", 10)  # ~57k proposal tokens (the budget is 65,536): minutes on the tiny model
    page.locator('[data-testid="stMultiSelect"]').first.click()
    page.get_by_role("option", name="MH power sampling").click()
    page.keyboard.press("Escape")
    wait_until_idle(page)
    page.get_by_role("button", name="Run selected strategies").click()
    # a free prompt has no checker: these columns are this run's (the first view's were judged correct or wrong)
    page.get_by_text("Greedy · no checker").wait_for(state="visible", timeout=PAGE_TIMEOUT_S * 1000)
    page.get_by_text("ASMC · no checker").wait_for(state="visible", timeout=PAGE_TIMEOUT_S * 1000)
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(state="visible", timeout=60_000)  # MH runs now, with its own status box
    assert page.get_by_text("MH power sampling · no checker").count() == 0, "MH had not finished"
    assert page.get_by_text("Greedy · no checker").is_visible()
    stop.click()
    page.get_by_text("Partial comparison: 2 of 3 strategies finished").wait_for(
        state="visible", timeout=PAGE_TIMEOUT_S * 1000)
    wait_until_idle(page)
    body = page.inner_text("body")
    assert "Greedy · no checker" in body and "ASMC · no checker" in body and "not run: MH power sampling" in body
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()
