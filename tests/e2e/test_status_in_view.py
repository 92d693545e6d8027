"""The status box of running work (progress, time left, Stop) is pinned in the window: after "Run batch", low on the
Decoding page, Stop was drawn below the fold (y = 1123 in a 1400 x 1000 window) and nothing visible changed."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import PAGE_TIMEOUT_S, click_stop, start_long_batch


def _inside(box: dict, width: int, height: int) -> bool:
    return box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width and box["y"] + box["height"] <= height


@pytest.mark.parametrize("width, height", [(1400, 1000), (1280, 720)])
def test_stop_is_in_the_viewport_right_after_the_click(app_url, browser, width, height):
    page = start_long_batch(app_url, browser, width, height)
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(state="visible", timeout=60_000)
    # where the user is: no scrolling after the click (bounding boxes are in the window's coordinates)
    assert _inside(stop.bounding_box(), width, height), (stop.bounding_box(), page.evaluate("window.scrollY"))
    progress = page.locator('[data-testid="stProgress"]').first
    progress.wait_for(state="visible", timeout=60_000)
    assert _inside(progress.bounding_box(), width, height)
    assert click_stop(page)  # through the DOM: the running box redraws Stop with each progress report
    page.get_by_text("Batch: stopped after").wait_for(state="visible", timeout=PAGE_TIMEOUT_S * 1000)
    page.close()
