"""Decoding side by side streams its columns: each strategy's column is on screen as soon as it finishes (greedy
first), while the next one still runs with its own progress and Stop; a Stop keeps the finished columns, marked as a
partial comparison (also tests/app/test_decoding_compare.py, without a race against MH's end). Everything waits on
what the page shows, never on a clock."""
from __future__ import annotations

from tests.e2e.conftest import PAGE_TIMEOUT_S, click_stop, rerun_after, wait_until_idle


MH = "MH power sampling"
# MH's own Stop (app.ui.run keys it "stop-<label>"; Streamlit's class writes the spaces as "-")
MH_STOP = '[class*="st-key-stop-MH-power-sampling"] button'


def _number(page, label: str, value: float) -> None:
    field = page.get_by_role("spinbutton", name=label)
    field.fill(str(value))
    rerun_after(page, lambda: field.press("Enter"))


def test_finished_strategies_show_before_the_last_one_ends_and_a_stop_keeps_them(app_url, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{app_url}/decoding")
    wait_until_idle(page)
    rerun_after(page, page.get_by_text("Own prompt").click)  # a short prompt: room in the tiny models' context
    page.get_by_text("Parameters and budgets").click()
    _number(page, "Max new tokens", 150)
    _number(page, "MH block size B", 1)
    _number(page, "MH steps K per block", 10)  # ~57k proposal tokens if no sequence stops (the budget is 65,536)
    # alpha 0.5: MH proposes at temperature 2, where the tiny model's stop token is rare, so MH grows all its blocks
    # (> 30 s on one idle core for seeds 0-3). At the default 4 its proposals end on the stop token within a few
    # blocks: MH was over in 0.1-0.3 s, so its Stop was seen only now and then, and clicked after MH had ended.
    _number(page, "alpha (power)", 0.5)
    page.locator('[data-testid="stMultiSelect"]').first.click()
    rerun_after(page, page.get_by_role("option", name=MH).click)
    page.keyboard.press("Escape")
    # the page's text read at every DOM change (a MutationObserver, not a polling clock: a starved renderer must
    # not merge two commits into one reading): whether MH's column was there when greedy's first appeared
    page.evaluate(f"""() => {{
        window.__greedySeen = null;
        new MutationObserver((_, observer) => {{
            const text = document.body.innerText;
            if (text.includes("Greedy · no checker")) {{
                window.__greedySeen = {{mh: text.includes("{MH} · no checker")}};
                observer.disconnect();
            }}
        }}).observe(document.body, {{childList: true, subtree: true, characterData: true}});
    }}""")
    page.get_by_role("button", name="Run selected strategies").click()
    # (a free prompt has no checker: these columns are this run's; the first view's were judged correct or wrong)
    seen = page.wait_for_function("() => window.__greedySeen", timeout=PAGE_TIMEOUT_S * 1000).json_value()
    assert seen == {"mh": False}, "greedy's column came only with the last strategy's"
    # then MH running (its own Stop shown) with the two finished columns on screen; MH's column instead means it
    # ended before it could be stopped, and the check below could not be made
    first = page.wait_for_function(f"""() => {{
        const text = document.body.innerText;
        if (text.includes("{MH} · no checker")) return "finished";
        return Boolean(document.querySelector('{MH_STOP}')) && text.includes("ASMC · no checker") && "running";
    }}""", timeout=PAGE_TIMEOUT_S * 1000).json_value()
    assert first == "running", "MH ended before it was seen running: these settings no longer make it a long run"
    # a Stop keeps the two finished columns, marked partial (MH's own Stop, clicked through the DOM: a Playwright
    # click waited 180 s for the redrawn Stop to settle in a CI run)
    assert click_stop(page, MH), "MH's Stop went before it could be clicked"
    ended = page.wait_for_function(f"""() => {{
        const text = document.body.innerText;
        return (text.includes("Partial comparison: 2 of 3 strategies finished") && "partial")
            || (text.includes("{MH} · no checker") && "finished");
    }}""", timeout=PAGE_TIMEOUT_S * 1000).json_value()
    assert ended == "partial", "MH ran to its end although its Stop was clicked while it ran"
    wait_until_idle(page)
    body = page.inner_text("body")
    assert "Greedy · no checker" in body and "ASMC · no checker" in body and f"not run: {MH}" in body
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()
