"""Streaming document readers for candidate pools and target sets (JSONL, CSV, Parquet, TXT).

A corpus is never loaded whole: `iter_documents` yields one `Document` at a time from a path or a
binary file object (an upload), so any size works. Fields: `text` (or `content`), optional `id`,
`domain` (or `label`) and `quality`. TXT files hold one document per line. Empty documents and
repeated ids are skipped and counted in `Notices`; non-UTF-8 bytes raise a `UserError`.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from backend.errors import UserError

FORMATS = ("jsonl", "csv", "parquet", "txt")
TEXT_KEYS = ("text", "content")
DOMAIN_KEYS = ("domain", "label")


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    domain: str | None = None
    quality: float | None = None

    @property
    def digest(self) -> str:
        """Content hash (the text only): the per-document feature cache key."""
        return text_digest(self.text)


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


@dataclass
class Notices:
    """What the reader skipped or changed, for one message to the user."""

    empty: int = 0
    duplicate_ids: list[str] = field(default_factory=list)

    def messages(self, what: str = "corpus") -> list[str]:
        out = []
        if self.empty:
            out.append(f"{self.empty} empty document(s) in the {what} were skipped.")
        if self.duplicate_ids:
            shown = ", ".join(self.duplicate_ids[:5]) + (" …" if len(self.duplicate_ids) > 5 else "")
            out.append(f"{len(self.duplicate_ids)} document(s) in the {what} repeat an earlier id and were skipped "
                       f"(first one kept): {shown}.")
        return out


Source = str | Path | BinaryIO


def detect_format(name: str) -> str:
    suffix = Path(name).suffix.lower().lstrip(".")
    fmt = {"json": "jsonl", "ndjson": "jsonl", "pq": "parquet", "text": "txt", "tsv": "csv"}.get(suffix, suffix)
    if fmt not in FORMATS:
        raise UserError(f"Unsupported corpus file {Path(name).name!r}: use one of .jsonl, .csv, .parquet, .txt.")
    return fmt


def _open_binary(source: Source) -> BinaryIO:
    if isinstance(source, (str, Path)):
        if not Path(source).is_file():
            raise UserError(f"Corpus file not found: {source}")
        return open(source, "rb")
    source.seek(0)
    return source


def _text_lines(handle: BinaryIO, name: str) -> Iterator[str]:
    """Decoded lines, with a clear message (and line number) on the first non-UTF-8 byte."""
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as err:
            raise UserError(f"{name} is not UTF-8 text (line {number}, byte {err.start}). "
                            "Re-save it as UTF-8.") from err


def _records(handle: BinaryIO, fmt: str, name: str) -> Iterator[dict]:
    if fmt == "jsonl":
        for number, line in enumerate(_text_lines(handle, name), start=1):
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise UserError(f"{name}, line {number}: not valid JSON ({err.msg}).") from err
                except (ValueError, RecursionError):  # a 5,000-digit number, or nesting too deep
                    raise UserError(f"{name}, line {number}: a value is too large or too deeply nested to read.") \
                        from None
                yield record if isinstance(record, dict) else {"text": str(record)}
    elif fmt == "txt":
        for number, line in enumerate(_text_lines(handle, name), start=1):
            yield {"id": f"line-{number}", "text": line.rstrip("\r\n")}
    elif fmt == "csv":
        reader = csv.DictReader(_text_lines(handle, name))
        try:
            yield from reader
        except csv.Error as err:  # stray carriage returns, a field over the csv module's size limit, ...
            raise UserError(f"{name}, line {max(reader.line_num, 1)}: not readable as CSV ({err}).") from None
    else:
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(handle)
        except Exception as err:
            raise UserError(f"{name} is not a readable Parquet file ({type(err).__name__}).") from err
        for batch in parquet.iter_batches(batch_size=1024):
            yield from batch.to_pylist()


def _first(record: dict, keys: tuple[str, ...]):
    for key in keys:
        if record.get(key) is not None:
            return record[key]
    return None


def iter_documents(source: Source, fmt: str | None = None, name: str | None = None,
                   notices: Notices | None = None) -> Iterator[Document]:
    """Yield documents one at a time; `fmt` defaults to the file extension of `name`/the path."""
    name = name or (Path(source).name if isinstance(source, (str, Path)) else getattr(source, "name", "upload"))
    fmt = fmt or detect_format(name)
    notices = notices if notices is not None else Notices()
    seen: set[str] = set()
    handle = _open_binary(source)
    try:
        for index, record in enumerate(_records(handle, fmt, name)):
            text = _first(record, TEXT_KEYS)
            if text is None and index == 0 and fmt != "txt":
                raise UserError(f"{name}: no 'text' (or 'content') field; found {sorted(record)[:8]}.")
            text = "" if text is None else str(text)
            if not text.strip():
                notices.empty += 1
                continue
            doc_id = str(record.get("id") if record.get("id") not in (None, "") else f"doc-{index}")
            if doc_id in seen:
                notices.duplicate_ids.append(doc_id)
                continue
            seen.add(doc_id)
            domain = _first(record, DOMAIN_KEYS)
            quality = record.get("quality")
            try:
                quality = None if quality in (None, "") else float(quality)
            except (TypeError, ValueError) as err:
                raise UserError(f"{name}, document {doc_id!r}: quality {quality!r} is not a number.") from err
            yield Document(id=doc_id, text=text, domain=None if domain in (None, "") else str(domain), quality=quality)
    finally:
        if isinstance(source, (str, Path)):
            handle.close()


def source_digest(source: Source) -> str:
    """Hash of the raw bytes (streamed): the corpus part of result cache keys."""
    handle = _open_binary(source)
    digest = hashlib.sha256()
    try:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    finally:
        if isinstance(source, (str, Path)):
            handle.close()
    return digest.hexdigest()[:20]


def chunks(documents: Iterator[Document], size: int) -> Iterator[list[Document]]:
    """Groups of `size` documents, so a stream is processed a bounded slice at a time."""
    chunk: list[Document] = []
    for doc in documents:
        chunk.append(doc)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def documents_from_texts(texts: list[str], prefix: str = "text", domain: str | None = None) -> list[Document]:
    """Documents from pasted texts (one per entry); empty entries are dropped."""
    return [Document(id=f"{prefix}-{i}", text=t, domain=domain) for i, t in enumerate(texts, start=1) if t.strip()]


def write_documents(documents: list[Document], fmt: str) -> bytes:
    """Serialise documents as JSONL or Parquet bytes (the page's export of a selected subset)."""
    rows = [{"id": d.id, "text": d.text, "domain": d.domain, "quality": d.quality} for d in documents]
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(
            [("id", pa.string()), ("text", pa.string()), ("domain", pa.string()), ("quality", pa.float64())])),
            buffer)
        return buffer.getvalue()
    raise UserError(f"Unknown export format {fmt!r} (jsonl or parquet).")
