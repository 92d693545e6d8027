"""User text stays text: no markdown, HTML or link survives the encoding, every character is kept."""
import html
import string

import plotly.graph_objects as go

from app.ui.text import WORD_JOINER, literal, literal_html, plot_label

PAYLOADS = ["Hi there.\n\n![t](http://host/x.gif) ok.", "<img src=x onerror=alert(1)>", "[click](javascript:x)",
            "**bold** _it_ `code` $x^2$ # heading", "www.example.com and https://e.com/a?b=1", "1. item\n- item"]


def test_literal_keeps_every_character_and_leaves_no_syntax():
    for text in PAYLOADS:
        encoded = literal(text)
        assert html.unescape(encoded).replace(WORD_JOINER, "") == text
        assert not [c for c in encoded if c in string.punctuation and c not in "&#;"]
        for syntax in ("![", "](", "<img", "**", "http:", "www.", "$x"):
            assert syntax not in encoded


def test_literal_breaks_bare_urls_and_addresses_that_gfm_would_link():
    # GFM links these after decoding character references: each needs a joiner inside its pattern
    for text, broken in [("http://host/x", "http" + WORD_JOINER + "&#58;"), ("WWW.host.org", "WWW" + WORD_JOINER),
                         ("me@host.org", "me" + WORD_JOINER + "&#64;")]:
        assert broken in literal(text)


def test_literal_html_is_one_block_without_blank_lines():
    out = literal_html(PAYLOADS[0])
    assert "\n" not in out and out.count("<br>") == 2 and "(http" not in out


def test_plot_labels_cannot_make_links():
    label = plot_label('<a href="http://evil">model</a>')
    assert "<a" not in label and html.unescape(label) == '<a href="http://evil">model</a>'
    go.Figure(go.Bar(x=[label], y=[1]))  # accepted by plotly as text


def test_token_views_keep_model_output_as_text():
    from app.figures.disagreement import tokens_html

    out = tokens_html(["Hi", "\n\n", "![t](http://host/x.gif)", "<b>x</b>"], [0.1, 0.2, 0.3, 0.4], {2})
    assert "\n" not in out and "![" not in out and "<b>" not in out and "http:" not in out
    assert html.unescape(out).count("http://host/x.gif") == 1


def test_detected_text_view_keeps_pasted_markdown_as_text():
    """The clickable text (app/ui/watermark_text.py) hands each piece to the browser as data, set as text there."""
    from app.figures.watermark import text_pieces

    pasted = "\n\n![t](http://host/x.gif) <b>ok</b>."
    out = text_pieces([("Hi there.", "", ""), (pasted, "strong", "2 <i>bits</i>")])
    assert [p["text"] for p in out] == ["Hi there.", pasted] and out[1]["title"] == "2 <i>bits</i>"
    assert [p["pick"] for p in out] == [None, 1]
