"""Text a user or a file supplied is data, never markup: one rule for every place the app shows it.

Streamlit renders markdown (images fetch their URL, links are clickable, `$` starts LaTeX) in
st.markdown, captions, alerts and widget labels; Plotly renders a subset of HTML (`<a href>`, `<b>`)
in chart labels. Encoding every ASCII punctuation character as an HTML character reference keeps
each character as typed while leaving no syntax for either to act on.
"""
from __future__ import annotations

import string

_REFERENCES = {ord(c): f"&#{ord(c)};" for c in string.punctuation}


def literal(text: object) -> str:
    """For st.markdown / st.caption / st.error / st.info / labels: shown exactly as typed, never rendered."""
    return str(text).translate(_REFERENCES)


def literal_html(text: object) -> str:
    """For a fragment inside `unsafe_allow_html` markup: no tag, no markdown, line breaks kept as <br>
    (a blank line would end the HTML block and hand the rest to the markdown parser)."""
    return literal(text).replace("\r\n", "\n").replace("\n", "<br>")


def plot_label(text: object) -> str:
    """For Plotly titles, axis and legend labels, hover text: no HTML, no links."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
