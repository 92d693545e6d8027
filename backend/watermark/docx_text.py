"""The text of a .docx, streamed from the parts its package relationships name, under one ParseBudget.

A .docx is a ZIP of XML parts; which part is the document is said by `_rels/.rels` (the officeDocument
relationship), not by the name word/document.xml: a package whose relationships point at word/main.xml, with a
one-paragraph decoy word/document.xml, is still a document, and a reader that counts the decoy and then hands the
package to python-docx parses the real (8M-paragraph) part unbounded (issue 46: 154 s, +2.6 GB). Headers, footers,
footnotes, endnotes and comments hold text too, and a parser that loads them pays for them, so they are streamed
and counted against the same budget (an 8M-paragraph header1.xml: +1 GB before).

Nothing here builds a document object: each part is first counted in its raw bytes (paragraphs, elements,
attributes, the longest start tag), then fed to lxml's parser with a target that builds no tree (every element, not only paragraphs and runs,
is gone once it ends), and the paragraphs, runs, bytes and seconds are spent from one budget that refuses at its first
cap. Issue 55: a 62 KB file of 7M elements in a header was accepted at +858 MB, 3M attributes cost +970 MB. The text is the
main part's paragraphs (as python-docx's `document.paragraphs`, tables' paragraphs included), one per line.
"""
from __future__ import annotations

import posixpath
import re
import zipfile

from backend.errors import UserError
from backend.upload_caps import Spending

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
MAIN_TYPE = "/officeDocument"
# the relationship types (their last path segment) of the main part's parts that hold text
TEXT_PART_TYPES = ("/header", "/footer", "/footnotes", "/endnotes", "/comments")
_MAX_RELS_BYTES = 1 << 20  # a relationships part lists a few dozen targets
ELEMENTS, ATTRIBUTES = "elements in one part", "attributes in one part"  # the budget's kinds for the per-part caps


def docx_text(archive: zipfile.ZipFile, spend: Spending) -> str:
    """The main part's text; every text part is streamed and counted first-come against `spend`."""
    main = _main_part(archive)
    related = [target for rel_type, target in _relationships(archive, main) if rel_type.endswith(TEXT_PART_TYPES)]
    text = _stream_part(archive, main, spend, keep_text=True)
    for part in dict.fromkeys(related):  # each once, though a header may be named by several sections
        _stream_part(archive, part, spend, keep_text=False)
    return text


def _main_part(archive: zipfile.ZipFile) -> str:
    for rel_type, target in _relationships(archive, ""):
        if rel_type.endswith(MAIN_TYPE):
            return target
    if "word/document.xml" in archive.namelist():  # a package without relationships: the conventional name
        return "word/document.xml"
    raise UserError("The .docx file names no main document part; it may be damaged.")


def _rels_name(part: str) -> str:
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", name + ".rels")


def _relationships(archive: zipfile.ZipFile, part: str) -> list[tuple[str, str]]:
    """(type, target part name) of `part`'s relationships ("" for the package's own), internal targets only."""
    from lxml import etree

    name = _rels_name(part) if part else "_rels/.rels"
    try:
        info = archive.getinfo(name)
    except KeyError:
        return []
    if info.file_size > _MAX_RELS_BYTES:
        raise UserError(f"The .docx file's relationships part {name} is over 1 MB; it may be crafted.")
    try:
        with archive.open(info) as stream:
            root = etree.fromstring(stream.read(_MAX_RELS_BYTES + 1), etree.XMLParser(resolve_entities=False,
                                                                                    no_network=True))
    except (etree.XMLSyntaxError, zipfile.BadZipFile, OSError, ValueError) as err:
        raise UserError(f"The .docx file's relationships could not be read ({type(err).__name__}).") from None
    base = posixpath.dirname(part)
    out = []
    for rel in root.iter(_RELS):
        if rel.get("TargetMode") == "External" or not rel.get("Target"):
            continue
        target = rel.get("Target")
        target = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target))
        out.append((rel.get("Type", ""), target))
    return out


def _stream_part(archive: zipfile.ZipFile, name: str, spend: Spending, *, keep_text: bool) -> str:
    """Stream one part through `_PartReader`, spending its paragraphs, runs, bytes and the time; the paragraphs'
    text (one per line) when `keep_text`."""
    from lxml import etree

    try:
        stream = archive.open(name)
    except KeyError:
        if keep_text:
            raise UserError(f"The .docx file's main part {name} is missing; it may be damaged.") from None
        return ""  # a missing header is python-docx's problem, not ours: it holds nothing to read
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as err:
        raise UserError(f"The .docx file could not be read ({type(err).__name__}); it may be damaged.") from None
    with stream:
        _quick_count(stream, spend)
    reader = _PartReader(spend, keep_text)
    parser = etree.XMLParser(target=reader, resolve_entities=False, no_network=True, huge_tree=False)
    try:
        with archive.open(name) as stream:
            counted = spend.reader(stream)
            while chunk := counted.read(1 << 16):
                parser.feed(chunk)
        return parser.close()
    except etree.XMLSyntaxError:
        raise UserError("The .docx file could not be read (XMLSyntaxError); it may be damaged.") from None
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise UserError(f"The .docx file could not be read ({type(err).__name__}); it may be damaged.") from None


class _PartReader:
    """lxml's parser target for one part: it is called per start tag, end tag and piece of text and builds no tree,
    so every element is counted and nothing outlives its own end (issue 55: a part of 7M elements other than
    paragraphs and runs was kept whole, +858 MB). The text is the paragraphs' runs' text, one paragraph a line."""

    def __init__(self, spend: Spending, keep_text: bool) -> None:
        self.spend, self.keep_text = spend, keep_text
        self.open: list[str] = []  # tags of the elements open now
        self.lines: list[str] = []
        self.pieces: list[str] = []  # the current paragraph's
        self.text: list[str] | None = None  # the current w:t's, while one is open in a run
        self.seen = 0

    def start(self, tag: str, attrib) -> None:
        self.seen += 1
        if self.seen & 4095 == 0:
            self.spend.tick()
        if tag == _R:
            self.spend.items("runs of text")
        elif self.keep_text and tag in _RUN_TEXT and self.open and self.open[-1] == _R:  # a run's own child
            meaning = _RUN_TEXT[tag]
            if meaning is None:
                self.text = []
            else:
                self.pieces.append(meaning)
        self.open.append(tag)

    def end(self, tag: str) -> None:
        self.open.pop()
        if tag == _P:
            self.spend.items("paragraphs")
            if self.keep_text:
                self.lines.append("".join(self.pieces))
                self.pieces.clear()
        elif tag == _T and self.text is not None:
            self.pieces.append("".join(self.text))
            self.text = None

    def data(self, text: str) -> None:
        if self.text is not None:
            self.text.append(text)

    def close(self) -> str:
        return "\n".join(self.lines)


_PARAGRAPH_TAGS = (b"<w:p>", b"<w:p/>", b"<w:p ")  # the usual prefix; another one is caught by the exact count
# The longest run of markup from a '<' to the next '<' (a start tag with its attributes, then its text): lxml holds
# one start tag whole, and 3M attributes in one tag cost about 1 GB. No '<' can stand inside a tag, so the run
# bounds the tag; prose runs of 256 KB without any markup are far past real documents.
MAX_MARKUP_BYTES = 256 * 1024
_LONG_MARKUP = re.compile(rb"<[^<]{%d}" % MAX_MARKUP_BYTES)


def _quick_count(stream, spend: Spending) -> None:
    """Refuse a part before lxml builds (and Python visits) an element of it, by counts over its raw bytes at C speed
    (100,000 elements cost about a second in Python): more paragraphs than the document has room for, more
    elements or attributes than one part may hold, a start tag longer than MAX_MARKUP_BYTES. Element and attribute
    counts are upper bounds: every start tag opens with '<' and is not '</'; every attribute has its '='."""
    room = dict(spend.budget.max_items)["paragraphs"] - spend.counts["paragraphs"]
    caps = dict(spend.budget.max_items)
    paragraphs = elements = attributes = 0
    tail = b""
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return
        data = tail + chunk
        paragraphs += sum(data.count(tag) for tag in _PARAGRAPH_TAGS)
        elements += chunk.count(b"<") - data.count(b"</") + tail.count(b"</")
        attributes += chunk.count(b"=")
        if paragraphs > room:
            spend.items("paragraphs", paragraphs)  # over the cap: refused with the budget's own message
        for kind, found in ((ELEMENTS, elements), (ATTRIBUTES, attributes)):
            if found > caps[kind]:
                spend.items(kind, found)
        if _LONG_MARKUP.search(data):
            raise UserError(f"The .docx file has a run of markup over {MAX_MARKUP_BYTES // 1024} KB without a '<' "
                            "(a start tag that long); it may be crafted.")
        opened = data.rfind(b"<")
        tail = data[opened:] if opened >= 0 else b""  # an unfinished tag continues in the next chunk
        paragraphs -= sum(tail.count(tag) for tag in _PARAGRAPH_TAGS)  # counted again with the next chunk
        spend.tick()


# What a run's child stands for in its text (None: the element's own text).
_P, _R, _T = f"{W}p", f"{W}r", f"{W}t"
_RUN_TEXT = {_T: None, f"{W}tab": "\t", f"{W}ptab": "\t", f"{W}br": "\n", f"{W}cr": "\n",
             f"{W}noBreakHyphen": "-"}
