"""The status box of running work (progress, time left, Stop) is pinned in the window: after "Run batch", low on the
Decoding page, Stop was drawn below the fold (y = 1123 in a 1400 x 1000 window) and nothing visible changed.

Both window sizes are checked on one running batch: the window is resized under it as a user does, with no scrolling
(a batch per size started the page and the work twice to read the same pinned box)."""
from __future__ import annotations

from tests.e2e.conftest import PAGE_TIMEOUT_S, click_stop, start_long_batch

WINDOWS = ((1400, 1000), (1280, 720))  # the size of the report, then a small laptop's


def _inside(box: dict, width: int, height: int) -> bool:
    return box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width and box["y"] + box["height"] <= height


def test_stop_is_in_the_viewport_right_after_the_click(app_url, browser):
    page = start_long_batch(app_url, browser, *WINDOWS[0])
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(state="visible", timeout=60_000)
    progress = page.locator('[data-testid="stProgress"]').first
    for resized, (width, height) in enumerate(WINDOWS):
        if resized:
            page.set_viewport_size({"width": width, "height": height})
        # where the user is: no scrolling after the click (bounding boxes are in the window's coordinates)
        assert _inside(stop.bounding_box(), width, height), (width, height, stop.bounding_box(),
                                                              page.evaluate("window.scrollY"))
        progress.wait_for(state="visible", timeout=60_000)
        assert _inside(progress.bounding_box(), width, height), (width, height, progress.bounding_box())
    # through the DOM: the running box redraws Stop with each progress report
    assert click_stop(page, "Batch"), "the batch ended before both windows were checked"
    page.get_by_text("Batch: stopped after").wait_for(state="visible", timeout=PAGE_TIMEOUT_S * 1000)
    page.close()
