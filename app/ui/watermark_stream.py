"""Watermark generation, streamed: each sentence is drawn as it is chosen, with the candidates it was chosen among and
the method's running verdict on the text so far (backend.watermark.running). What was shown is kept in the session
after every sentence, so a Stop (or any interruption) keeps it, marked as a partial text; the store keeps only a
finished generation, so a partial one is never mistaken for it."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from app.ui.text import literal
from backend.watermark import GenerateRequest
from backend.watermark.generation import PartialGeneration
from backend.watermark.running import RunningVerdict, running_verdict

STATE = "wm-gen-streamed"  # the generation on screen: a tuple of Streamed, one per column


@dataclass(frozen=True)
class Streamed:
    """One column of a generation as far as it was shown."""

    label: str
    partial: PartialGeneration | None  # None: no sentence chosen yet
    verdict: RunningVerdict | None  # the running verdict on `partial` (None: the baseline, or nothing yet)
    complete: bool = False

    def partial_line(self) -> str:
        written = 0 if self.partial is None else len(self.partial.sentences)
        asked = "" if self.partial is None else f" of {self.partial.max_sentences}"
        return (f"Partial text: {written}{asked} sentences were written before it was stopped. It is not stored "
                "and not handed to the Detect tab; press Generate for the whole text.")


def sentence_line(partial: PartialGeneration) -> str:
    s = partial.latest
    chosen = (f"chosen among {s.n_candidates} candidates" if s.n_candidates > 1 else "the only candidate sampled")
    bits = f" · {s.level} level · tier {s.tier}" if s.level else ""
    return (f"Sentence {s.index + 1} of at most {partial.max_sentences} · {chosen}{bits} · "
            f"{partial.candidates_sampled:,} candidates sampled so far")


def draw(streamed: Streamed) -> None:
    """The text so far with its newest sentence in bold, how it was chosen and the running verdict beside it."""
    partial = streamed.partial
    if partial is None:
        st.caption("No sentence chosen yet.")
        return
    text, newest = partial.text, partial.latest.text
    before = text[:len(text) - len(newest)] if text.endswith(newest) else text
    body = literal(before) + (f"**{literal(newest)}**" if text.endswith(newest) else "")
    text_column, verdict_column = st.columns([3, 2])
    text_column.markdown(body)
    text_column.caption(sentence_line(partial))
    if streamed.verdict is not None:
        verdict_column.caption("Detector's verdict on the text so far")
        verdict_column.markdown(literal(streamed.verdict.line()))


def _keep(index: int, streamed: Streamed) -> None:
    shown = list(st.session_state.get(STATE, ()))
    shown[index:index + 1] = [streamed]
    st.session_state[STATE] = tuple(shown)


def streamer(index: int, label: str, request: GenerateRequest, handle, key_holder: bool):
    """An `on_partial` callback for column `index`: judges the text so far, keeps it in the session (before drawing:
    a Stop interrupts at the next drawing) and redraws the column's box."""
    box = st.empty()
    _keep(index, Streamed(label, None, None))

    def shown(partial: PartialGeneration) -> None:
        streamed = Streamed(label, partial, running_verdict(partial, request, handle, key_holder))
        _keep(index, streamed)
        with box.container():
            draw(streamed)

    return box, shown


def finished(index: int, label: str, box, generation, request: GenerateRequest, handle, key_holder: bool) -> None:
    """The finished text in the column's box, with the verdict on all of it (also after a stored result)."""
    whole = PartialGeneration(generation.method, generation.text, generation.sentences,
                              generation.candidates_sampled, request.sampling.max_sentences)
    streamed = Streamed(label, whole if whole.sentences else None,
                        running_verdict(whole, request, handle, key_holder) if whole.sentences else None, complete=True)
    _keep(index, streamed)
    with box.container():
        draw(streamed)


def failed() -> None:
    """An error ended the generation (its message is shown): nothing is kept as a stopped text."""
    st.session_state.pop(STATE, None)


def start() -> None:
    """A new generation replaces the one kept on screen."""
    st.session_state.pop(STATE, None)


def kept_partial() -> None:
    """On a rerun without Generate: the columns of a stopped generation, each marked partial if it was cut."""
    shown: tuple[Streamed, ...] = st.session_state.get(STATE, ())
    if not shown or all(s.complete for s in shown):
        return
    for column, streamed in zip(st.columns(len(shown)), shown):
        with column:
            st.markdown(f"**{literal(streamed.label)}**")
            if not streamed.complete:
                st.warning(streamed.partial_line(), icon=":material/stop_circle:")
            draw(streamed)
