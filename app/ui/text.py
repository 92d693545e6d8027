"""Text a user or a file supplied is data, never markup: one rule for every place the app shows it.

Streamlit renders markdown (images fetch their URL, links are clickable, `$` starts LaTeX) in
st.markdown, captions, alerts and widget labels; Plotly renders a subset of HTML (`<a href>`, `<b>`)
in chart labels. Encoding every ASCII punctuation character as an HTML character reference keeps
each character as typed while leaving no syntax for either to act on.

Invisible format and control characters in such text (a right-to-left override in a model name, a zero-width
space) are written out as `\\u202e` by `backend.unicode_text.visible`, the one helper for every displayed name
(pages, figures, CLI output): shown, never applied. Line breaks and tabs stay what they are.
"""
from __future__ import annotations

import re
import string

from backend.unicode_text import visible

_REFERENCES = {ord(c): f"&#{ord(c)};" for c in string.punctuation}
# Streamlit's GFM turns bare URLs ("http://", "www.") and e-mail addresses into links *after* character
# references are decoded, so encoding is not enough there: an invisible word joiner (U+2060: neither space nor
# punctuation) inside each pattern ("http⁠://", "www⁠.", "a⁠@b") leaves nothing for the autolinker to match.
WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?=://)|(?i:(?<=www)(?=\.))|(?=@)")


def literal(text: object) -> str:
    """For st.markdown / st.caption / st.error / st.info / labels: shown exactly as typed, never rendered."""
    return _AUTOLINK.sub(WORD_JOINER, visible(text, keep="\n\r\t")).translate(_REFERENCES)


def literal_html(text: object) -> str:
    """For a fragment inside `unsafe_allow_html` markup: no tag, no markdown, line breaks kept as <br>
    (a blank line would end the HTML block and hand the rest to the markdown parser). Inside an HTML block
    nothing is autolinked, so no joiners are needed."""
    return str(text).translate(_REFERENCES).replace("\r\n", "\n").replace("\n", "<br>")


def plot_label(text: object) -> str:
    """For Plotly titles, axis and legend labels, hover text: no HTML, no links, hidden characters shown."""
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
