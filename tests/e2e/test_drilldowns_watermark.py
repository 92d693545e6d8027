"""Real browser: a click on a sentence's bar of the Watermark page's per-sentence chart opens that sentence's
evidence (issue 44 §2). The click is a real mouse click at the middle of a drawn bar, computed from the chart's own
axes, so Plotly's selection event and Streamlit's rerun are the ones a user triggers."""
from __future__ import annotations

from app import server
from tests.e2e.conftest import PAGE_TIMEOUT_S, click_chart_point, wait_until_idle

BAR_MIDDLE = """(selector) => {
    const gd = document.querySelector(selector);
    const full = gd._fullLayout, points = gd.calcdata[0];
    const i = points.findIndex(p => p.y > 0);  // a bar with a height to click on
    const box = gd.getBoundingClientRect();
    return [i, box.left + full.xaxis._offset + full.xaxis.c2p(points[i].x),
            box.top + full.yaxis._offset + (full.yaxis.c2p(0) + full.yaxis.c2p(points[i].y)) / 2];
}"""


def test_a_click_on_a_sentence_bar_opens_its_evidence(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(f"{app_url}/watermark")
    wait_until_idle(page)
    page.wait_for_selector(".st-key-wm-sentences .js-plotly-plot .main-svg", timeout=60_000)
    server.wait_for_charts(page, 60)
    assert "Click a sentence in the text or its bar" in page.inner_text("body")
    page.locator(".st-key-wm-sentences .js-plotly-plot").scroll_into_view_if_needed()
    index, x, y = page.evaluate(BAR_MIDDLE, ".st-key-wm-sentences .js-plotly-plot")
    click_chart_point(page, x, y)
    page.wait_for_function(f"document.body.innerText.includes('Sentence {index + 1} ·')",
                           timeout=PAGE_TIMEOUT_S * 1000)
    wait_until_idle(page)
    body = page.inner_text("body")
    assert "Semantic bit" in body and "Syntactic bit" in body
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def test_a_click_on_a_sentence_of_the_text_opens_its_evidence(app_url, browser):
    """The highlighted text itself is clickable (it had been a strip of bars a few pixels wide)."""
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    page.goto(f"{app_url}/watermark")
    wait_until_idle(page)
    pieces = page.locator(".wm-piece")  # the scored pieces of the text
    pieces.first.wait_for(state="visible", timeout=60_000)
    second = pieces.nth(1) if pieces.count() > 1 else pieces.first
    number = 2 if pieces.count() > 1 else 1
    second.click()
    page.wait_for_function(f"document.body.innerText.includes('Sentence {number} ·')", timeout=PAGE_TIMEOUT_S * 1000)
    wait_until_idle(page)
    assert "Semantic bit" in page.inner_text("body") or "Too short to carry bits" in page.inner_text("body")
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()
