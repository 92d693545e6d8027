"""The Watermark page's detected text, each scored piece (a token, or an IPMark sentence) clickable where it stands:
a click opens that piece's drill-down. It replaces a strip of bars a few pixels wide. The browser sets every piece
as text (`textContent`), so a pasted text is never markup; a click only chooses a position, checked here against the
detection on screen."""
from __future__ import annotations

import streamlit as st

from app.figures.watermark import text_pieces

_JS = """
export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let root = parentElement.querySelector("div.wm-text");
  if (!root) {
    root = document.createElement("div");
    root.className = "wm-text";
    parentElement.appendChild(root);
  }
  root.replaceChildren(...(data?.pieces ?? []).map((piece) => {
    if (piece.pick === null) return document.createTextNode(piece.text);
    const span = document.createElement("span");
    span.textContent = piece.text;
    span.title = piece.title ? piece.title + " · click for its details" : "click for its details";
    span.style.background = piece.colour;
    span.className = piece.pick === data.picked ? "wm-piece wm-picked" : "wm-piece";
    span.dataset.pick = String(piece.pick);
    span.onclick = () => setStateValue("picked", piece.pick);
    return span;
  }));
}
"""
_CSS = """
.wm-text { line-height: 1.9; white-space: pre-wrap; font-family: var(--st-font, sans-serif); }
.wm-piece { border-radius: 3px; cursor: pointer; }
.wm-piece:hover { outline: 1px solid #666; }
.wm-picked { outline: 2px solid #222; }
"""
# in the page's own DOM, not a shadow root: the text is the page's text (find in page, the page's innerText)
_TEXT = st.components.v2.component("wm_clickable_text", js=_JS, css=_CSS, isolate_styles=False)


def chosen_piece(value, pieces) -> int | None:
    """The piece a click chose, when it is one of the scored pieces on screen (anything else: none)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(pieces):
        return None
    return value if pieces[value][1] else None


def unit_of(pieces, index: int) -> int:
    """IPMark: the sentence row of scored piece `index` (its sentences are its scored pieces, in order)."""
    return sum(1 for _, mark, _ in pieces[:index] if mark)


def clickable_text(pieces, key: str, on_pick) -> None:
    """The text with its scored pieces shaded and clickable; `on_pick(index)` runs on a click, before the rerun,
    with the clicked piece's position in `pieces`."""
    def picked() -> None:
        state = st.session_state.get(key) or {}
        index = chosen_piece(state.get("picked"), pieces)
        if index is not None:
            on_pick(index)

    _TEXT(data={"pieces": text_pieces(pieces)}, key=key, default={"picked": None}, on_picked_change=picked)
