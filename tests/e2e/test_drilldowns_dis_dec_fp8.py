"""Real browser: a click on a point of the Disagreement trace opens both models' distributions at that position,
a click on a head of the FP8 heatmap opens its bound beside its logit histogram, and a click on the Decoding ESS
chart opens a particle (issue 44 §2).

The click is a real mouse click at the point's pixel, computed from the drawn chart's own axes (Plotly's
calcdata and axis scales), so Plotly's selection event and Streamlit's rerun are the ones a user triggers.
"""
from __future__ import annotations

import pytest

from app import server
from tests.e2e.conftest import click_chart_point, rerun_after, wait_until_idle


def _point_pixel(page, chart_key: str, trace: int, index: int) -> tuple[float, float]:
    """Page coordinates of point `index` of trace `trace` in the chart with Streamlit key `chart_key`."""
    return tuple(page.evaluate("""([selector, trace, index]) => {
        const gd = document.querySelector(selector);
        const full = gd._fullLayout, data = gd._fullData[trace];
        const xa = full[data.xaxis.replace('x', 'xaxis')], ya = full[data.yaxis.replace('y', 'yaxis')];
        const point = gd.calcdata[trace][index];
        const box = gd.getBoundingClientRect();
        return [box.left + xa._offset + xa.c2p(point.x), box.top + ya._offset + ya.c2p(point.y)];
    }""", [f".st-key-{chart_key} .js-plotly-plot", trace, index]))


def _click_point(page, chart_key: str, trace: int, index: int) -> None:
    page.locator(f".st-key-{chart_key} .js-plotly-plot").scroll_into_view_if_needed()
    click_chart_point(page, *_point_pixel(page, chart_key, trace, index))


@pytest.fixture(scope="module")
def page(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    yield page
    page.close()


def test_a_click_on_the_disagreement_trace_opens_the_position(app_url, page):
    page.goto(f"{app_url}/disagreement")
    wait_until_idle(page)
    # the tiny test models have 256 positions: the fewest new tokens keeps the default problem inside them
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Max new tokens").get_by_role("slider")
    slider.focus()
    rerun_after(page, lambda: page.keyboard.press("Home"))
    page.wait_for_selector(".st-key-dis-trace-fig .js-plotly-plot .main-svg", timeout=60_000)
    server.wait_for_charts(page, 60)
    assert "Click a point on the trace" in page.inner_text("body")
    _click_point(page, "dis-trace-fig", 0, 3)
    page.wait_for_selector("text=Position 3 of the base rollout", timeout=60_000)
    page.wait_for_selector(".st-key-dis-position-fig .js-plotly-plot .main-svg", timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_role("button", name="Check the gate here").count() == 1


def test_a_click_on_an_fp8_head_opens_its_histogram(app_url, page):
    page.goto(f"{app_url}/fp8_bounds")
    wait_until_idle(page)
    page.wait_for_selector(".st-key-fp8-heatmap .js-plotly-plot .main-svg", timeout=60_000)
    server.wait_for_charts(page, 60)
    n_heads = page.evaluate("() => document.querySelector('.st-key-fp8-heatmap .js-plotly-plot')"
                            ".calcdata[0][0].z[0].length")
    _click_point(page, "fp8-heatmap", 1, 1 * n_heads + 2)  # the clear marker over layer 1, head 2
    page.wait_for_selector("h3:has-text(\"Layer 1, head 2\")", timeout=60_000)
    page.wait_for_selector(".st-key-fp8-head-hist .js-plotly-plot .main-svg", timeout=60_000)
    assert "Observed max |S|" in page.inner_text("body")
    assert page.locator('[data-testid="stException"]').count() == 0


def test_a_click_on_the_ess_chart_opens_a_particle(app_url, page):
    page.goto(f"{app_url}/decoding")
    wait_until_idle(page)
    page.wait_for_selector(".st-key-dec-ess-fig .js-plotly-plot .main-svg", timeout=60_000)
    server.wait_for_charts(page, 60)
    _click_point(page, "dec-ess-fig", 0, 0)  # round 1's ESS after the first token
    page.wait_for_selector("h3:has-text(\"Round 1, particle\")", timeout=60_000)
    page.wait_for_selector(".st-key-dec-particle-fig .js-plotly-plot .main-svg", timeout=60_000)
    assert "a child of the heaviest particle" in page.inner_text("body")
    assert page.locator('[data-testid="stException"]').count() == 0
