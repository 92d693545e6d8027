"""Streaming readers: formats, bad input (empty, duplicate ids, non-UTF-8, bad JSON), export round trip."""
import io
import json
import types

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from backend.corpus.documents import Notices, documents_from_texts, iter_documents, source_digest, write_documents
from backend.errors import UserError

ROWS = [{"id": "a", "text": "first doc", "domain": "x", "quality": 0.5},
        {"id": "b", "text": "second doc", "domain": "y"}]


def test_jsonl_csv_txt_parquet_read_the_same_documents(tmp_path):
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "c.csv").write_text("id,text,domain,quality\na,first doc,x,0.5\nb,second doc,y,\n")
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "c.parquet")
    for name in ("c.jsonl", "c.csv", "c.parquet"):
        docs = list(iter_documents(tmp_path / name))
        assert [(d.id, d.text, d.domain, d.quality) for d in docs] == [("a", "first doc", "x", 0.5),
                                                                       ("b", "second doc", "y", None)], name
    (tmp_path / "c.txt").write_text("first doc\n\nsecond doc\n")
    docs = list(iter_documents(tmp_path / "c.txt"))
    assert [d.text for d in docs] == ["first doc", "second doc"] and docs[0].id == "line-1"


def test_reader_is_lazy_and_accepts_uploads():
    upload = io.BytesIO(b'{"text": "one"}\n{"text": "two"}\n')
    stream = iter_documents(upload, name="upload.jsonl")
    assert isinstance(stream, types.GeneratorType)
    assert next(stream).text == "one"
    assert [d.id for d in iter_documents(upload, name="upload.jsonl")] == ["doc-0", "doc-1"]  # rewinds


def test_empty_documents_and_duplicate_ids_are_skipped_with_notices():
    data = b'{"id": "a", "text": "x"}\n{"id": "b", "text": "  "}\n{"id": "a", "text": "y"}\n'
    notices = Notices()
    docs = list(iter_documents(io.BytesIO(data), name="p.jsonl", notices=notices))
    assert [d.text for d in docs] == ["x"]
    text = " ".join(notices.messages("pool"))
    assert "1 empty" in text and "repeat an earlier id" in text and "a" in text


@pytest.mark.parametrize("data,name,message", [
    (b"ok line\n\xff\xfe broken\n", "bad.txt", r"not UTF-8 text \(line 2"),
    (b'{"text": "fine"}\n{broken\n', "bad.jsonl", "line 2: not valid JSON"),
    (b'{"body": "no text field"}\n', "bad.jsonl", "no 'text'"),
    (b"text\n", "bad.docx", "Unsupported corpus file"),
    (b"not parquet at all", "bad.parquet", "not a readable Parquet"),
])
def test_bad_files_raise_user_errors(data, name, message):
    with pytest.raises(UserError, match=message):
        list(iter_documents(io.BytesIO(data), name=name))


def test_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="not found"):
        list(iter_documents(tmp_path / "nope.jsonl"))


def test_export_round_trips_and_digest_is_stable(tmp_path):
    docs = documents_from_texts(["alpha", "", "beta"], domain="d")
    assert [d.id for d in docs] == ["text-1", "text-3"]
    for fmt in ("jsonl", "parquet"):
        path = tmp_path / f"out.{fmt}"
        path.write_bytes(write_documents(docs, fmt))
        assert [(d.id, d.text, d.domain) for d in iter_documents(path)] == [(d.id, d.text, d.domain) for d in docs]
    assert source_digest(io.BytesIO(b"abc")) == source_digest(io.BytesIO(b"abc")) != source_digest(io.BytesIO(b"abd"))
