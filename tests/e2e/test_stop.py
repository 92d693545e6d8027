"""A long computation in a real browser: its progress bar and Stop button are in view without a click, and Stop
ends it with the one notice ("stopped after N s, nothing was stored"). The Decoding batch starts on a plain
button, the case where the notice had been lost."""
from __future__ import annotations

from tests.e2e.conftest import PAGE_TIMEOUT_S, click_stop, start_long_batch

UNDER_WAY = ("[...document.querySelectorAll('[data-testid=\"stProgress\"] [role=\"progressbar\"]')]"
             ".some(bar => Number(bar.getAttribute('aria-valuenow')) > 0)")


def test_a_batch_shows_progress_and_stop_and_says_it_stopped(app_url, browser):
    page = start_long_batch(app_url, browser, 1400, 1600)
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for(state="visible", timeout=60_000)  # in view at once: not inside a closed box
    # the bar comes with the run's first progress report (the batch first checks which problems fit the context);
    # Stop once the batch itself is under way, its bar past zero
    page.locator('[data-testid="stProgress"]').first.wait_for(state="visible", timeout=30_000)
    page.wait_for_function(UNDER_WAY, timeout=PAGE_TIMEOUT_S * 1000, polling=50)
    assert click_stop(page, "Batch")  # the batch's own Stop, through the DOM (it is redrawn with each report)
    notice = page.get_by_text("Batch: stopped after")
    notice.wait_for(state="visible", timeout=PAGE_TIMEOUT_S * 1000)
    assert "nothing was stored" in notice.inner_text()
    assert page.get_by_role("button", name="Stop").count() == 0
    page.close()
