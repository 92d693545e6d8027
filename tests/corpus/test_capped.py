import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from backend.corpus.capped import POOL_UPLOAD, TARGET_UPLOAD, check_upload
from backend.errors import UserError
from backend.upload_caps import LineCaps

SMALL = LineCaps("The target file", max_lines=3, max_line_bytes=100, max_bytes=2000)


def _parquet(rows: int, text: str = "t") -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({"text": [text] * rows}), buf)
    return buf.getvalue()


def test_files_within_the_caps_pass():
    check_upload(b'{"text": "a"}\n{"text": "b"}\n', "t.jsonl", SMALL)
    check_upload(b"text\na\nb\n", "t.csv", SMALL)
    check_upload(_parquet(3), "t.parquet", SMALL)


@pytest.mark.parametrize("data, name, named", [
    (b"a\nb\nc\nd\n", "t.txt", "more than 3 lines"),
    (b'{"text": "' + b"x" * 200 + b'"}\n', "t.jsonl", "per line"),
    (_parquet(4), "t.parquet", "has 4 rows; the limit is 3"),
    (b"PAR1 not really", "t.parquet", "not a readable Parquet"),
])
def test_over_a_cap_is_refused_with_the_cap_named(data, name, named):
    with pytest.raises(UserError, match=named):
        check_upload(data, name, SMALL)


def test_a_parquet_that_unpacks_past_the_byte_cap_is_refused_from_its_footer():
    packed = _parquet(3, "y" * 5000)  # one repeated value: a few hundred bytes packed, 15 KB unpacked
    assert len(packed) < SMALL.max_bytes
    with pytest.raises(UserError, match="unpacks to"):
        check_upload(packed, "t.parquet", SMALL)


def test_the_shipped_caps_keep_targets_smaller_than_pools():
    assert TARGET_UPLOAD.max_lines < POOL_UPLOAD.max_lines and TARGET_UPLOAD.max_bytes <= POOL_UPLOAD.max_bytes
    check_upload("".join(json.dumps({"text": f"doc {i}"}) + "\n" for i in range(2000)).encode(), "t.jsonl",
                 TARGET_UPLOAD)


def test_a_shard_set_is_refused_by_count_and_total_before_any_is_read():
    from backend.corpus.capped import MAX_SHARD_SET_BYTES, MAX_SHARDS, check_shard_set

    check_shard_set([("a.jsonl", 10)] * MAX_SHARDS)
    with pytest.raises(UserError, match=f"the limit is {MAX_SHARDS} at a time"):
        check_shard_set([("a.jsonl", 10)] * (MAX_SHARDS + 1))
    with pytest.raises(UserError, match="the limit is 200 MB at a time"):
        check_shard_set([("a.parquet", MAX_SHARD_SET_BYTES // 2 + 1)] * 2)
