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
        return "\n".join(page.extract_text() or "" for page in reader.pages)
    except UserError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, AssertionError, ZeroDivisionError) as err:
        raise UserError(f"The PDF could not be read ({type(err).__name__}); it may be damaged.") from err


def _docx(data: bytes) -> str:
    import zipfile

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UserError("This is not a .docx file (not a ZIP container).")
    from docx import Document

    try:
        document = Document(io.BytesIO(data))
    except Exception as err:  # python-docx raises assorted errors for damaged packages
        raise UserError(f"The .docx file could not be read ({type(err).__name__}); it may be damaged.") from err
    return "\n".join(p.text for p in document.paragraphs)
