"""Text from an uploaded file: .txt / .md (UTF-8, or UTF-16 with a BOM), .pdf (pypdf), .docx (streamed XML).

Anything a user can get wrong becomes a UserError with a plain message: too large, unknown type,
binary content, undecodable text, a broken or encrypted PDF, a corrupt .docx, no text at all.
"""
from __future__ import annotations

import io
import logging
from pathlib import Path

from backend.errors import UserError
from backend.upload_caps import ParseBudget
from backend.watermark.docx_text import ATTRIBUTES, ELEMENTS

MAX_BYTES = 10 * 1024 * 1024
MAX_CHARS = 1_000_000
# Checked before parsing: a small archive can unpack to gigabytes, a small PDF hold thousands of pages.
MAX_DOCX_UNPACKED = 50_000_000  # bytes of all parts together, as the archive declares them
MAX_DOCX_PARTS = 1000
MAX_PDF_PAGES = 500  # about 1M characters of prose
# A page's content stream is parsed operator by operator in Python (pypdf): 900k `q Q` took 5.6 s a page, and 499
# pages may share one such stream (82 KB). So the content is budgeted as well as the pages (issue 46).
PDF_SECONDS = 10.0
MAX_PDF_CONTENT_BYTES = 64 * 2**20  # decoded content streams, all pages together (prose: ~5 KB a page)
MAX_PDF_TOKENS = 5_000_000  # operators and operands, all pages together (prose: a few thousand a page)
MAX_PDF_PAGE_TOKENS = 200_000
# python-docx builds an object per paragraph: 1.2M empty ones (a 123 KB file, 7 MB of XML) took gigabytes.
# Counted with a streaming parser that stops at the cap, before python-docx sees the file.
MAX_DOCX_PARAGRAPHS = 100_000  # MAX_CHARS of prose in paragraphs of 10+ characters
MAX_DOCX_RUNS = 300_000  # formatted runs: MAX_CHARS of prose with a change of formatting every 3+ characters
# Every element and attribute of a part, whatever its name (formatting, bookmarks, made-up ones): a run at the runs
# cap with its properties is about 10 elements and attributes, so real parts stay well under these.
MAX_DOCX_PART_ELEMENTS = 2_000_000
MAX_DOCX_PART_ATTRIBUTES = 2_000_000
DOCX_SECONDS = 5.0  # the caps above are reached in well under a second; this bounds whatever they miss
SUFFIXES = (".txt", ".md", ".pdf", ".docx")


def read_upload(name: str, data: bytes) -> str:
    """The text of an uploaded file (raises UserError with the reason when there is none)."""
    suffix = Path(name or "").suffix.lower()
    if suffix not in SUFFIXES:
        raise UserError(f"Unsupported file type {suffix or '(none)'!r}; upload one of {', '.join(SUFFIXES)}.")
    if len(data) > MAX_BYTES:
        raise UserError(f"The file is {len(data) / 1e6:.1f} MB; the limit is {MAX_BYTES / 1e6:.0f} MB.")
    if not data:
        raise UserError("The file is empty.")
    if suffix in (".txt", ".md") and len(data) > 4 * MAX_CHARS + 4:  # 4 bytes a character at most: over for sure
        raise UserError(f"The text has more than {MAX_CHARS:,} characters; the limit is {MAX_CHARS:,}.")
    reader = {".pdf": _pdf, ".docx": _docx}.get(suffix, _plain)
    text = reader(data)
    if not text.strip():
        raise UserError("No text found in the file (a scanned PDF has images, not text).")
    if len(text) > MAX_CHARS:
        raise UserError(f"The text has {len(text):,} characters; the limit is {MAX_CHARS:,}.")
    return text


def _plain(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as err:
            raise UserError("The file claims to be UTF-16 but is not valid UTF-16.") from err
    if b"\x00" in data:  # anywhere: a NUL after the first 8 KB is as binary as one before
        raise UserError("This looks like a binary file, not text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UserError(f"The file is not UTF-8 text (invalid byte at position {err.start}); "
                        "save it as UTF-8 and upload it again.") from err


def pdf_budget() -> ParseBudget:
    """One PDF's budget: seconds of parsing, bytes of decoded content streams and their tokens (operators and
    operands), summed over its pages (pages that share one stream pay for it each time: each is parsed)."""
    return ParseBudget("The PDF", max_seconds=PDF_SECONDS, max_bytes=MAX_PDF_CONTENT_BYTES,
                       max_items=(("content-stream operators and operands", MAX_PDF_TOKENS),),
                       bytes_phrase="has content streams of")


def _pdf(data: bytes) -> str:
    if not data.lstrip().startswith(b"%PDF"):
        raise UserError("This is not a PDF file (no %PDF header).")
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # broken files make pypdf chatty
    spend = pdf_budget().start()
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise UserError("The PDF is encrypted; upload an unprotected copy.")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise UserError(f"The PDF has {len(reader.pages):,} pages; the limit is {MAX_PDF_PAGES}.")
        parts, total = [], 0
        for number, page in enumerate(reader.pages, 1):
            _spend_content(page, number, spend)  # before pypdf parses the page's streams: the parse is the cost
            # pypdf calls this for every operator it visits: the clock is read while it works, not only between pages
            parts.append(page.extract_text(visitor_operand_before=lambda *_: spend.tick()) or "")
            total += len(parts[-1]) + 1
            if total > MAX_CHARS:
                raise UserError(f"The PDF's text has more than {MAX_CHARS:,} characters (the limit).")
        return "\n".join(parts)
    except UserError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, AssertionError, ZeroDivisionError) as err:
        raise UserError(f"The PDF could not be read ({type(err).__name__}); it may be damaged.") from err


# A byte that can end one token of a content stream and start the next: whitespace and PDF's delimiters. Their count
# bounds the number of operators and operands from above, at C speed, without parsing anything.
_TOKEN_BOUNDS = (b" ", b"\n", b"\r", b"\t", b"\x0c", b"/", b"(", b"[", b"<", b"{")


def _spend_content(page, number: int, spend) -> None:
    """Spend a page's content streams (its Contents and the Form XObjects it draws, nested) before they are
    parsed: their decoded bytes and an upper bound of their tokens; a page of more than MAX_PDF_PAGE_TOKENS is
    refused by itself (a page of prose has a few thousand)."""
    tokens = 0
    for data in _content_streams(page.get("/Contents"), page.get("/Resources"), depth=0, seen=set()):
        spend.bytes(len(data))
        tokens += sum(data.count(mark) for mark in _TOKEN_BOUNDS)
        if tokens > MAX_PDF_PAGE_TOKENS:
            raise UserError(f"Page {number} of the PDF has more than {MAX_PDF_PAGE_TOKENS:,} content-stream operators "
                            f"and operands (the limit per page; a page of prose has a few thousand).")
    spend.items("content-stream operators and operands", tokens)


def _content_streams(contents, resources, depth: int, seen: set):
    """The decoded bytes of `contents` (a stream or an array of streams), then of the Form XObjects in
    `resources`, recursively (depth 4 at most; each object once per page)."""
    contents = contents.get_object() if contents is not None else None
    streams = list(contents) if isinstance(contents, list) else [contents] if contents is not None else []
    for stream in streams:
        stream = stream.get_object()
        if hasattr(stream, "get_data") and id(stream) not in seen:
            seen.add(id(stream))
            yield stream.get_data()
    if depth >= 4 or resources is None:
        return
    xobjects = resources.get_object().get("/XObject")
    for ref in (xobjects.get_object().values() if xobjects is not None else ()):
        form = ref.get_object()
        if form.get("/Subtype") == "/Form" and id(form) not in seen:
            yield from _content_streams(form, form.get("/Resources"), depth + 1, seen)


def docx_budget() -> ParseBudget:
    """One .docx's budget (read from the module's caps at each call, so a test can lower one)."""
    return ParseBudget("The .docx file", max_seconds=DOCX_SECONDS, max_bytes=MAX_DOCX_UNPACKED,
                       max_items=(("paragraphs", MAX_DOCX_PARAGRAPHS), ("runs of text", MAX_DOCX_RUNS),
                                  (ELEMENTS, MAX_DOCX_PART_ELEMENTS), (ATTRIBUTES, MAX_DOCX_PART_ATTRIBUTES)))


def _docx(data: bytes) -> str:
    import zipfile

    from backend.watermark.docx_text import docx_text

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UserError("This is not a .docx file (not a ZIP container).")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise UserError(f"The .docx file could not be read ({type(err).__name__}); it may be damaged.") from err
    if len(parts) > MAX_DOCX_PARTS:
        raise UserError(f"The .docx file has {len(parts):,} parts; the limit is {MAX_DOCX_PARTS:,}.")
    # Word writes parts stored or deflated. Python's zipfile inflates those a read's worth at a time, but hands a
    # bzip2 or LZMA read all its output at once: a 3 KB bzip2 header unpacks to 48 MB in one read (issue 55).
    odd = next((p for p in parts if p.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)), None)
    if odd is not None:
        raise UserError(f"The .docx file's part {odd.filename} uses a compression Word does not write "
                        f"(method {odd.compress_type}); it may be crafted.")
    unpacked = sum(p.file_size for p in parts)
    if unpacked > MAX_DOCX_UNPACKED:
        raise UserError(f"The .docx file unpacks to {unpacked / 1e6:.0f} MB; the limit is "
                        f"{MAX_DOCX_UNPACKED / 1e6:.0f} MB.")
    return docx_text(archive, docx_budget().start())  # streamed: no document object is ever built
