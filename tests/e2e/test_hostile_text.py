"""Hostile text through every entry point, in a real browser: pasted text, each upload kind, registry names.

Each payload carries a markdown image, a markdown link, raw HTML and a script. The page must show the text as
typed, create no element that points outside, and send no request anywhere but the app (every other request is
aborted by the route, so nothing leaves the machine even when the test fails).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest

from app import server
from app.ui.text import WORD_JOINER
from tests.e2e.conftest import PAGE_TIMEOUT_S, Tab, open_tab, rerun_after, wait_until_idle

MD_IMAGE = "![t](http://tracker.invalid/md.gif)"
MD_LINK = "[see](http://tracker.invalid/link)"
HTML_IMG = "<img src=http://tracker.invalid/img.gif>"
HTML_LINK = '<a href="http://tracker.invalid/a">click</a>'
SCRIPT = "<script>fetch('http://tracker.invalid/s')</script>"
PAYLOAD = f"Hi there, a pasted paragraph.\n\n{MD_IMAGE} and {MD_LINK} {HTML_IMG} {SCRIPT} ok."
ONE_LINE = f"The enzyme {MD_IMAGE} was measured {HTML_IMG} at three {MD_LINK} temperatures."

# Every image the page placed has had its request answered or aborted (a lazy one off screen asks for nothing).
IMAGES_SETTLED = "[...document.images].every(image => image.complete || image.loading === 'lazy')"
# Any element that would fetch or navigate somewhere outside the app.
OUTSIDE_REFERENCES_JS = """() => {
  const names = ['href', 'xlink:href', 'src', 'srcset', 'action', 'formaction', 'poster', 'data'];
  const found = [];
  for (const el of document.querySelectorAll('*')) {
    for (const name of names) {
      const value = el.getAttribute(name);
      if (value && value.includes('tracker.invalid')) {
        const holder = el.closest('[data-testid]');  // which Streamlit element rendered it
        const where = [];
        for (let up = holder; up; up = up.parentElement.closest('[data-testid]')) where.push(up.dataset.testid);
        found.push(el.tagName + ' ' + name + '=' + value + ' in ' + where.join(' < ') + ': '
                   + (holder ? holder.textContent.slice(0, 80) : ''));
      }
    }
    const style = el.getAttribute('style');
    if (style && style.includes('tracker.invalid')) found.push(el.tagName + ' style');
  }
  return found;
}"""


@dataclass
class GuardedPage:
    """A browser page whose requests outside the app are recorded and aborted."""
    page: object
    outside: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        # late requests are issued after the script is idle: Plotly's as it draws, images' once they are placed
        server.wait_for_charts(self.page, 60)
        self.page.wait_for_function(IMAGES_SETTLED, timeout=PAGE_TIMEOUT_S * 1000, polling=50)
        problems = {"exception boxes": self.page.locator('[data-testid="stException"]').count(),
                    "requests sent outside": self.outside, "elements pointing outside": self.page.evaluate(
                        OUTSIDE_REFERENCES_JS)}
        assert not any(problems.values()), problems

    def body(self) -> str:
        """The page's text as a reader sees it (the invisible joiners that keep URLs unlinked removed)."""
        return self.page.inner_text("body").replace(WORD_JOINER, "")

    def chart_text(self) -> str:
        return self.page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                                  ".map(p => p.textContent).join('\\n')")

    def upload(self, uploader_label: str, name: str, content: str) -> None:
        uploader = self.page.locator('[data-testid="stFileUploader"]').filter(has_text=uploader_label)
        rerun_after(self.page, lambda: uploader.locator('input[type="file"]').set_input_files(
            {"name": name, "mimeType": "text/plain", "buffer": content.encode()}))

    def wait_for_text(self, text: str) -> None:
        """Wait until the page shows `text`, then until its run has finished."""
        self.page.wait_for_function("t => document.body.innerText.includes(t)", arg=text,
                                    timeout=PAGE_TIMEOUT_S * 1000)
        wait_until_idle(self.page)

    def type_in(self, label: str, text: str, submit: str = "Control+Enter") -> None:
        """Fill the field labelled `label` and submit it (Control+Enter in a text area, Enter in a text input)."""
        box = self.page.get_by_label(label)
        box.fill(text)
        rerun_after(self.page, lambda: box.press(submit))

    def choose(self, radio_label: str, option: str) -> None:
        """Choose `option` of the radio group labelled `radio_label` (a click on the chosen one reruns nothing)."""
        group = self.page.locator('[data-testid="stRadio"]').filter(has_text=radio_label)
        if group.get_by_role("radio", name=option, exact=True).is_checked():
            return
        rerun_after(self.page, group.get_by_text(option, exact=True).click)


@pytest.fixture(scope="module")
def guarded_tab(app_url, browser):
    """One tab for the module, as one user working through the pages: each test reaches its page by the sidebar
    (a new tab per test would load and compile the app's code again, seconds of CPU each)."""
    page = browser.new_page(viewport={"width": 1400, "height": 2000})
    guarded = GuardedPage(page)

    def route(request_route):
        if request_route.request.url.startswith(app_url):
            request_route.continue_()
        else:
            guarded.outside.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.goto(app_url)
    wait_until_idle(page)
    yield guarded, Tab(page)
    page.close()


@pytest.fixture
def guarded(guarded_tab):
    g, tab = guarded_tab

    def open_page(slug: str) -> GuardedPage:
        g.outside.clear()
        tab.show(slug)
        return g

    return open_page


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_pasted_text_on_the_watermark_page(guarded):
    g = guarded("watermark")
    open_tab(g.page, "Detect")
    g.choose("Paste", "Paste")
    g.type_in("Paste text to check", PAYLOAD)
    g.assert_clean()
    assert MD_IMAGE in g.body() and HTML_IMG in g.body()


def test_uploaded_text_file_on_the_watermark_page(guarded):
    g = guarded("watermark")
    open_tab(g.page, "Detect")
    g.choose("Paste", "Upload")
    uploaded = PAYLOAD.replace("a pasted paragraph", "an uploaded file")
    g.upload("at most", "hostile.txt", uploaded)
    g.wait_for_text("an uploaded file")
    g.assert_clean()
    assert MD_IMAGE in g.body() and HTML_IMG in g.body()


def test_registry_names_on_the_watermark_page(guarded):
    g = guarded("watermark")
    open_tab(g.page, "Registry")
    g.page.get_by_label("Model name").fill(f"{HTML_LINK} {MD_IMAGE}")
    rerun_after(g.page, g.page.get_by_role("button", name="Add model").click)
    address = re.search(r"Model (\d+) added", g.body()).group(1)
    g.page.get_by_label("Model address", exact=True).first.fill(address)
    g.page.get_by_label("User label").fill(f"{HTML_IMG} {MD_LINK}")
    rerun_after(g.page, g.page.get_by_role("button", name="Add user").click)
    g.assert_clean()
    assert HTML_LINK in g.chart_text()  # the registry chart labels the bars with the name, as typed


def test_uploaded_problems_on_the_decoding_page(guarded):
    g = guarded("decoding")
    g.choose("Arithmetic problem", "Upload JSONL")
    g.upload("JSON lines", "problems.jsonl", _jsonl([{"question": ONE_LINE, "answer": 4}]))
    g.assert_clean()
    assert MD_IMAGE in g.body() and HTML_IMG in g.body()
    # a bad line: the message quotes the value, as text
    g.upload("JSON lines", "bad.jsonl", _jsonl([{"question": "Two plus two?", "answer": MD_IMAGE}]))
    # replacing the file may take two reruns (the old file removed, then the new one read)
    g.wait_for_text("Line 1")
    g.assert_clean()
    assert "Line 1" in g.body() and MD_IMAGE in g.body()


def test_uploaded_targets_and_pool_on_the_nag_page(guarded):
    g = guarded("nag")
    g.choose("Sample domains", "Upload")
    targets = [{"text": f"{ONE_LINE} ({i})", "domain": f"{HTML_LINK} {MD_IMAGE}"} for i in range(3)]
    g.upload("Target examples", "targets.jsonl", _jsonl(targets))
    g.choose("Sample pool", "Upload")
    pool = [{"id": f"{HTML_IMG}{i}", "text": f"{PAYLOAD} ({i})"} for i in range(12)]
    g.upload("Candidate corpus", "pool.jsonl", _jsonl(pool))
    g.assert_clean()
    assert "Something went wrong" not in g.body()
    # a target file that is not JSON lines: the error names the line, the text stays text
    g.upload("Target examples", "broken.jsonl", f"{MD_IMAGE} {HTML_IMG}\n")
    g.assert_clean()


def test_uploaded_parallel_sentences_on_the_mt_page(guarded):
    g = guarded("mt_heads")
    g.page.get_by_text("Data: built-in set or your own upload").click()
    rows = "en\tfr\n" + "".join(f"{ONE_LINE} {i}\tLa phrase {MD_LINK} {i}\n" for i in range(12))
    g.upload("Parallel sentences", f"hostile {MD_IMAGE}.tsv".replace("/", "_"), rows)
    g.assert_clean()
    # a header that is not a language code: the message shows it as text
    g.upload("Parallel sentences", "bad.tsv", f"en\t{HTML_IMG}\nHello\tBonjour\n")
    g.assert_clean()
    assert "Something went wrong" not in g.body()


def test_typed_question_on_the_disagreement_page(guarded):
    g = guarded("disagreement")
    g.choose("Generated (held-out)", "Typed")
    g.type_in("Question", PAYLOAD)
    g.type_in("Answer (optional, integer)", MD_IMAGE, submit="Enter")
    g.assert_clean()
    assert "The answer must be an integer" in g.body()


def test_pasted_targets_on_the_nag_page(guarded):
    g = guarded("nag")
    g.choose("Sample domains", "Paste")
    g.type_in("One target example per line", f"{ONE_LINE}\n{HTML_LINK} {SCRIPT}")
    g.assert_clean()
