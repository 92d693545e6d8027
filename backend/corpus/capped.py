"""Caps on an uploaded corpus file (NAG targets and pools), checked on its bytes before any document is read.

Line formats (JSONL, CSV, TXT) are scanned line by line (a quoted multi-line CSV cell counts as several lines,
so the count is an upper bound); Parquet is checked from its footer alone: rows and uncompressed bytes.
"""
from __future__ import annotations

import io
from collections.abc import Sequence

from backend.corpus.documents import detect_format
from backend.errors import UserError
from backend.upload_caps import LineCaps, check_lines, check_size

# Targets are read whole into memory and every one is tokenised: a few thousand examples are plenty for a profile.
TARGET_UPLOAD = LineCaps("The target file", max_lines=2000, max_line_bytes=256 * 2**10, max_bytes=10 * 2**20)
# The pool is streamed, so its size is bounded by the upload itself (under the server's maxUploadSize); a line is
# one document, tokenised whole before truncation, hence the per-line cap. Larger corpora: a server-side path.
POOL_UPLOAD = LineCaps("The candidate corpus", max_lines=500_000, max_line_bytes=256 * 2**10, max_bytes=40 * 2**20)

# Shards uploaded for a corpus job are written to disk, but the server holds them all in memory until then.
SHARD_UPLOAD = LineCaps("An uploaded shard", max_lines=500_000, max_line_bytes=256 * 2**10, max_bytes=40 * 2**20)
MAX_SHARDS = 20
MAX_SHARD_SET_BYTES = 200 * 2**20


def check_shard_set(files: Sequence[tuple[str, int]]) -> None:
    """Refuse an upload of shards by their (name, size) alone, before any is read: count and total bytes."""
    if len(files) > MAX_SHARDS:
        raise UserError(f"{len(files)} shards uploaded; the limit is {MAX_SHARDS} at a time (larger corpora: "
                        "a folder on the server).")
    total = sum(size for _, size in files)
    if total > MAX_SHARD_SET_BYTES:
        raise UserError(f"The shards add up to {total / 2**20:,.0f} MB; the limit is "
                        f"{MAX_SHARD_SET_BYTES / 2**20:,.0f} MB at a time (larger corpora: a folder on the server).")


def check_upload(data: bytes, name: str, caps: LineCaps) -> None:
    """UserError naming the cap when the uploaded corpus file `name` exceeds `caps`."""
    if detect_format(name) != "parquet":
        check_lines(data, caps)
        return
    check_size(len(data), caps)
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(io.BytesIO(data)).metadata
    except Exception as err:  # noqa: BLE001 - pyarrow raises several types for a damaged footer
        raise UserError(f"{name} is not a readable Parquet file ({type(err).__name__}).") from err
    if meta.num_rows > caps.max_lines:
        raise UserError(f"{caps.what} has {meta.num_rows:,} rows; the limit is {caps.max_lines:,} "
                        f"({caps.describe()}).")
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if unpacked > caps.max_bytes:  # a small, well-compressed file can unpack to gigabytes
        raise UserError(f"{caps.what} unpacks to {unpacked / 2**20:,.0f} MB; the limit is "
                        f"{caps.max_bytes / 2**20:,.0f} MB ({caps.describe()}).")
