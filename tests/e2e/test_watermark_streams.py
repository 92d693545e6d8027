"""Watermark Generate streams its sentences in a real browser: the first sentence, its candidate count and the
detector's running verdict are on screen while the generation still runs (its Stop is shown), and a Stop keeps them,
marked as a partial text (also tests/app/test_watermark_stream.py, without a race against the last sentence). Every
wait is on what the page shows, never on a clock."""
from __future__ import annotations

from tests.e2e.conftest import PAGE_TIMEOUT_S, click_stop, open_tab, rerun_after, wait_until_idle

IPMARK = "IPMark (sentence level, model + user)"

# The first reading that shows a sentence with its candidate count and its running verdict (drawn as separate
# elements, so both are waited for): is the generation still running (its Stop shown)?
STREAMED_SENTENCE = """() => {
    const text = document.body.innerText;
    // the sentence's own caption (the progress bar's text also starts "Sentence 1 of at most 50")
    const shown = text.match(/Sentence (\\d+) of at most 50 · chosen among 32 candidates/);
    if (!shown || !text.includes("Detector's verdict on the text so far")) return false;
    const verdict = new RegExp(`after ${shown[1]} sentences?:`).test(text);
    const stop = [...document.querySelectorAll("button")].some(b => b.innerText.trim() === "Stop");
    return verdict && {stop: stop};
}"""

def _fill(field, value: str) -> None:
    """A field of the Generate form: Tab commits it (Enter would submit the form)."""
    field.fill(value)
    field.press("Tab")


def test_sentences_show_as_they_are_chosen_and_a_stop_keeps_them(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{app_url}/watermark")
    wait_until_idle(page)
    open_tab(page, "Generate")
    page.locator(".st-key-wm-gen-method input").click()
    rerun_after(page, page.get_by_role("option", name=IPMARK).click)
    _fill(page.locator(".st-key-wm-prompt textarea"), "Hi.")  # room for more sentences in the tiny models' context
    _fill(page.get_by_role("spinbutton", name="Sentences"), "50")
    _fill(page.get_by_role("spinbutton", name="B (candidates)"), "32")  # 32 candidates a sentence: each takes a while
    page.get_by_role("button", name="Generate").click()
    seen = page.wait_for_function(STREAMED_SENTENCE, timeout=PAGE_TIMEOUT_S * 1000).json_value()
    assert seen == {"stop": True}, "the sentences came only at the end of the generation"
    if click_stop(page, "Generating ("):  # still running: its Stop keeps the sentences shown, marked partial
        ended = page.wait_for_function("""() => {
            const text = document.body.innerText;
            return (text.includes("Partial text:") && "partial")
                || (text.includes("now the default of the Detect tab") && "finished");
        }""", timeout=PAGE_TIMEOUT_S * 1000).json_value()
        wait_until_idle(page)
        body = page.inner_text("body")
        if ended == "partial":
            assert "sentences were written before it was stopped" in body and "chosen among 32 candidates" in body
            assert "Detector's verdict on the text so far" in body
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()
