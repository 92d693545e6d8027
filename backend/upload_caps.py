"""Caps on an uploaded line-based file, checked on its raw bytes before anything is decoded or parsed.

A parser's working memory is many times the bytes it reads (one 5 MB JSON line reached a 5.1 GB server
peak on its way to becoming a prompt), so the caps are checked on the bytes with one bounded scan that
copies at most one line at a time, and every refusal names the cap it hit.
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.errors import UserError


@dataclass(frozen=True)
class LineCaps:
    """What one upload may hold. `what` names the file in messages ("A decoding upload")."""

    what: str
    max_lines: int  # non-blank lines (records)
    max_line_bytes: int
    max_bytes: int

    @property
    def upload_mb(self) -> int:
        """The cap as a whole number of MB for st.file_uploader(max_upload_size=...), at least 1."""
        return max(1, -(-self.max_bytes // 2**20))

    def describe(self) -> str:
        return (f"at most {self.max_lines:,} lines, {_size(self.max_line_bytes)} per line, "
                f"{_size(self.max_bytes)} in all")


def _size(n: int) -> str:
    if n >= 2**20:
        return f"{n / 2**20:,.4g} MB"
    return f"{n / 2**10:,.4g} KB" if n >= 2**10 else f"{n} bytes"


def check_size(size: int, caps: LineCaps) -> None:
    """Refuse a file by its size alone (a path's stat, an upload's .size) before reading it."""
    if size > caps.max_bytes:
        raise UserError(f"{caps.what} is {_size(size)}; the limit is {_size(caps.max_bytes)} "
                        f"({caps.describe()}).")


def check_lines(data: bytes, caps: LineCaps) -> int:
    """The number of non-blank lines of `data`, or a UserError naming the first cap exceeded.

    Bounded work: the total is checked first (no scan), then each line's length before it is looked at,
    and the scan stops at the first line over a cap.
    """
    check_size(len(data), caps)
    lines, start, end_of_data = 0, 0, len(data)
    number = 0
    while start < end_of_data:
        end = data.find(b"\n", start)
        end = end_of_data if end < 0 else end
        number += 1
        if end - start > caps.max_line_bytes:
            raise UserError(f"{caps.what}, line {number}: {_size(end - start)} in one line; the limit is "
                            f"{_size(caps.max_line_bytes)} per line ({caps.describe()}).")
        if data[start:end].strip():
            lines += 1
            if lines > caps.max_lines:
                raise UserError(f"{caps.what} has more than {caps.max_lines:,} lines (the limit; "
                                f"{caps.describe()}). Split it into smaller files.")
        start = end + 1
    return lines
