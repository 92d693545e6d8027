"""The text of a .docx, streamed from the parts its package relationships name, under one ParseBudget.

A .docx is a ZIP of XML parts; which part is the document is said by `_rels/.rels` (the officeDocument
relationship), not by the name word/document.xml: a package whose relationships point at word/main.xml, with a
one-paragraph decoy word/document.xml, is still a document, and a reader that counts the decoy and then hands the
package to python-docx parses the real (8M-paragraph) part unbounded (issue 46: 154 s, +2.6 GB). Headers, footers,
footnotes, endnotes and comments hold text too, and a parser that loads them pays for them, so they are streamed
and counted against the same budget (an 8M-paragraph header1.xml: +1 GB before).

Nothing here builds a document object: each part is read with lxml's iterparse, every element freed as it ends,
and the paragraphs, runs, bytes and seconds are spent from one budget that refuses at its first cap. The text is the
main part's paragraphs (as python-docx's `document.paragraphs`, tables' paragraphs included), one per line.
"""
from __future__ import annotations

import posixpath
import zipfile

from backend.errors import UserError
from backend.upload_caps import Spending

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
MAIN_TYPE = "/officeDocument"
# the relationship types (their last path segment) of the main part's parts that hold text
TEXT_PART_TYPES = ("/header", "/footer", "/footnotes", "/endnotes", "/comments")
_MAX_RELS_BYTES = 1 << 20  # a relationships part lists a few dozen targets


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
    """Stream one part's paragraphs and runs, spending them, its bytes and the time; the paragraphs' text
    (one per line) when `keep_text`."""
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
    stream = archive.open(name)
    lines: list[str] = []
    pieces: list[str] = []
    try:
        with stream:
            for _, element in etree.iterparse(spend.reader(stream), events=("end",),
                                              tag=(f"{W}p", f"{W}r"), resolve_entities=False, no_network=True,
                                              huge_tree=False):
                if element.tag == f"{W}r":
                    spend.items("runs of text")
                    if keep_text:
                        pieces.append(_run_text(element))
                    element.clear()
                    continue
                spend.items("paragraphs")
                if keep_text:
                    lines.append("".join(pieces))
                    pieces.clear()
                element.clear()
                parent = element.getparent()
                while parent is not None and element.getprevious() is not None:  # earlier paragraphs, freed
                    del parent[0]
    except etree.XMLSyntaxError:
        raise UserError("The .docx file could not be read (XMLSyntaxError); it may be damaged.") from None
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise UserError(f"The .docx file could not be read ({type(err).__name__}); it may be damaged.") from None
    return "\n".join(lines)


_PARAGRAPH_TAGS = (b"<w:p>", b"<w:p/>", b"<w:p ")  # the usual prefix; another one is caught by the exact count


def _quick_count(stream, spend: Spending) -> None:
    """Refuse a part of more paragraphs than the budget allows by counting their tags in the raw bytes at C speed,
    before lxml builds (and Python visits) an element per paragraph: 100,000 elements cost about a second."""
    kind = "paragraphs"
    room = dict(spend.budget.max_items)[kind] - spend.counts[kind]
    found, tail = 0, b""
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return
        data = tail + chunk
        found += sum(data.count(tag) for tag in _PARAGRAPH_TAGS)
        if found > room:
            spend.items(kind, found)  # over the cap: refused with the budget's own message
        tail = data[-5:]
        found -= sum(tail.count(tag) for tag in _PARAGRAPH_TAGS)  # counted again with the next chunk
        spend.tick()


def _run_text(run) -> str:
    out = []
    for child in run:
        if child.tag == f"{W}t":
            out.append(child.text or "")
        elif child.tag in (f"{W}tab", f"{W}ptab"):
            out.append("\t")
        elif child.tag in (f"{W}br", f"{W}cr"):
            out.append("\n")
        elif child.tag == f"{W}noBreakHyphen":
            out.append("-")
    return "".join(out)
