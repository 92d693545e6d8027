"""Text from an uploaded file: .txt / .md (UTF-8, or UTF-16 with a BOM), .pdf (pypdf), .docx (python-docx).

Anything a user can get wrong becomes a UserError with a plain message: too large, unknown type,
binary content, undecodable text, a broken or encrypted PDF, a corrupt .docx, no text at all.
"""
from __future__ import annotations

import io
import logging
from pathlib import Path

from backend.errors import UserError

MAX_BYTES = 10 * 1024 * 1024
MAX_CHARS = 1_000_000
# Checked before parsing: a small archive can unpack to gigabytes, a small PDF hold thousands of pages.
MAX_DOCX_UNPACKED = 50_000_000  # bytes of all parts together, as the archive declares them
MAX_DOCX_PARTS = 1000
MAX_PDF_PAGES = 500  # about 1M characters of prose
# python-docx builds an object per paragraph: 1.2M empty ones (a 123 KB file, 7 MB of XML) took gigabytes.
# Counted with a streaming parser that stops at the cap, before python-docx sees the file.
MAX_DOCX_PARAGRAPHS = 100_000  # MAX_CHARS of prose in paragraphs of 10+ characters
MAX_DOCX_RUNS = 300_000  # formatted runs: MAX_CHARS of prose with a change of formatting every 3+ characters
_WORD_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
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
    if b"\x00" in data[:8192]:
        raise UserError("This looks like a binary file, not text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UserError(f"The file is not UTF-8 text (invalid byte at position {err.start}); "
                        "save it as UTF-8 and upload it again.") from err


def _pdf(data: bytes) -> str:
    if not data.lstrip().startswith(b"%PDF"):
        raise UserError("This is not a PDF file (no %PDF header).")
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # broken files make pypdf chatty
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise UserError("The PDF is encrypted; upload an unprotected copy.")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise UserError(f"The PDF has {len(reader.pages):,} pages; the limit is {MAX_PDF_PAGES}.")
        parts, total = [], 0
        for page in reader.pages:
            parts.append(page.extract_text() or "")
            total += len(parts[-1]) + 1
            if total > MAX_CHARS:
                raise UserError(f"The PDF's text has more than {MAX_CHARS:,} characters (the limit).")
        return "\n".join(parts)
    except UserError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, AssertionError, ZeroDivisionError) as err:
        raise UserError(f"The PDF could not be read ({type(err).__name__}); it may be damaged.") from err


def _docx(data: bytes) -> str:
    import zipfile

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UserError("This is not a .docx file (not a ZIP container).")
    try:
        parts = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise UserError(f"The .docx file could not be read ({type(err).__name__}); it may be damaged.") from err
    if len(parts) > MAX_DOCX_PARTS:
        raise UserError(f"The .docx file has {len(parts):,} parts; the limit is {MAX_DOCX_PARTS:,}.")
    unpacked = sum(p.file_size for p in parts)
    if unpacked > MAX_DOCX_UNPACKED:
        raise UserError(f"The .docx file unpacks to {unpacked / 1e6:.0f} MB; the limit is "
                        f"{MAX_DOCX_UNPACKED / 1e6:.0f} MB.")
    _count_paragraphs(zipfile.ZipFile(io.BytesIO(data)))
    from docx import Document

    try:
        document = Document(io.BytesIO(data))
    except Exception as err:  # python-docx raises assorted errors for damaged packages
        raise UserError(f"The .docx file could not be read ({type(err).__name__}); it may be damaged.") from err
    return "\n".join(p.text for p in document.paragraphs)


def _count_paragraphs(archive) -> int:
    """Paragraphs (and their runs) in word/document.xml, streamed one element at a time and freed as it ends,
    reading at most MAX_DOCX_UNPACKED bytes of XML whatever the archive declares; refuses at the first cap passed,
    before python-docx builds anything."""
    from lxml import etree

    try:
        part = archive.open("word/document.xml")
    except KeyError:
        raise UserError("The .docx file has no word/document.xml; it may be damaged.") from None
    paragraphs = runs = 0
    try:
        with part:
            for _, element in etree.iterparse(_Capped(part, MAX_DOCX_UNPACKED), events=("end",),
                                              tag=(f"{_WORD_NS}p", f"{_WORD_NS}r"), resolve_entities=False,
                                              no_network=True, huge_tree=False):
                if element.tag == f"{_WORD_NS}r":
                    runs += 1
                    if runs > MAX_DOCX_RUNS:
                        raise UserError(f"The .docx file has more than {MAX_DOCX_RUNS:,} runs of text; the limit "
                                        f"is {MAX_DOCX_RUNS:,}.")
                    element.clear()  # its text is not needed to count; the paragraph frees the rest
                    continue
                paragraphs += 1
                if paragraphs > MAX_DOCX_PARAGRAPHS:
                    raise UserError(f"The .docx file has more than {MAX_DOCX_PARAGRAPHS:,} paragraphs; "
                                    f"the limit is {MAX_DOCX_PARAGRAPHS:,}.")
                element.clear()
                parent = element.getparent()
                while parent is not None and element.getprevious() is not None:  # earlier paragraphs, freed
                    del parent[0]
    except etree.XMLSyntaxError as err:
        raise UserError("The .docx file could not be read (XMLSyntaxError); it may be damaged.") from err
    return paragraphs


class _Capped:
    """A file-like reader that refuses past `limit` bytes (an archive's declared sizes are only a claim)."""

    def __init__(self, stream, limit: int):
        self.stream, self.limit, self.read_bytes = stream, limit, 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size if size is not None and size >= 0 else self.limit + 1)
        self.read_bytes += len(data)
        if self.read_bytes > self.limit:
            raise UserError(f"The .docx document unpacks to more than {self.limit / 1e6:.0f} MB; the limit is "
                            f"{self.limit / 1e6:.0f} MB.")
        return data
