"""Watermark generation streamed (app/ui/watermark_stream.py): each sentence's view is kept in the session as it is
drawn, with its candidate count and the running verdict; a generation stopped part-way shows what it had, marked as
partial (tests/e2e/test_watermark_streams.py sees the sentences arrive in a browser before the end)."""
from dataclasses import replace

import pytest

from app.ui.text import literal
from app.ui.watermark_stream import STATE, Streamed, sentence_line
from tests.app.helpers import open_tab, private_identities, run_page


@pytest.fixture
def one_identity(tmp_path, monkeypatch):
    identities = private_identities(tmp_path, monkeypatch)
    model = identities.add_model("page-model")
    identities.add_user(model.address, "page-user")


def _generate(sentences: int):
    at = open_tab(run_page("watermark.py"), "wm-tab", "Generate")
    at.number_input(key="wm-gen-sentences-kgw").set_value(sentences)
    next(b for b in at.button if "Generate" in b.label).click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_a_finished_generation_shows_its_sentences_candidates_and_verdict(one_identity):
    at = _generate(2)
    (shown,) = at.session_state[STATE]
    assert shown.complete and shown.partial.text == at.session_state["wm-text"]
    assert shown.verdict.sentences == len(shown.partial.sentences) and shown.verdict.method == "kgw"
    captions = [c.value for c in at.caption]
    assert sentence_line(shown.partial) in captions and "the only candidate sampled" in sentence_line(shown.partial)
    assert any(m.value.startswith(f"after {len(shown.partial.sentences)} sentence") for m in at.markdown)


def test_a_stopped_generation_keeps_what_it_showed_marked_as_partial(one_identity):
    at = _generate(2)
    (whole,) = at.session_state[STATE]
    first = replace(whole.partial, sentences=whole.partial.sentences[:1],
                    text=whole.partial.text[:whole.partial.text.index(whole.partial.sentences[0].text)
                                            + len(whole.partial.sentences[0].text)])
    at.session_state[STATE] = (Streamed(whole.label, first, whole.verdict, complete=False),)  # as a Stop leaves it
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("Partial text: 1 of 2 sentences were written before it was stopped") for w in warnings)
    assert any(literal(first.sentences[0].text) in m.value for m in at.markdown)  # shown as text, not markup
    assert sentence_line(first) in [c.value for c in at.caption]
