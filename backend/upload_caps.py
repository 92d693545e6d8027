"""Caps on an uploaded line-based file, checked on its raw bytes before anything is decoded or parsed.

A parser's working memory is many times the bytes it reads (one 5 MB JSON line reached a 5.1 GB server
peak on its way to becoming a prompt), so the caps are checked on the bytes with one bounded scan that
copies at most one line at a time, and every refusal names the cap it hit.
"""
from __future__ import annotations

import time
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


@dataclass(frozen=True)
class ParseBudget:
    """What parsing one uploaded document may cost, whatever the file declares: seconds of parsing, bytes produced
    by unpacking or decoding, and items built (paragraphs, runs, content-stream tokens), each kind with its own
    cap. Every upload parser spends from one `start()`ed budget while it streams, so the next format gets the same
    refusal for free: at the first cap passed, a UserError naming it.

        spend = DOCX_BUDGET.start()
        spend.items("paragraphs")         # one more; over its cap -> UserError
        for chunk in spend.reader(part):  # bytes read are counted
    """

    what: str  # "The .docx file", names the file in messages
    max_seconds: float
    max_bytes: int
    max_items: tuple[tuple[str, int], ...]  # (kind, cap): ("paragraphs", 100_000), ...
    bytes_phrase: str = "unpacks to"  # "The .docx file unpacks to more than 50 MB"

    def start(self, clock=time.monotonic) -> "Spending":
        return Spending(self, clock)


class Spending:
    """One document's running spend against a ParseBudget (not shared between documents or threads)."""

    def __init__(self, budget: ParseBudget, clock) -> None:
        self.budget, self.clock = budget, clock
        self.deadline = clock() + budget.max_seconds
        self.read = 0
        self.counts = dict.fromkeys((kind for kind, _ in budget.max_items), 0)
        self._caps = dict(budget.max_items)

    def tick(self) -> None:
        """Refuse once the document has taken its seconds (checked at every spend, and by long loops)."""
        if self.clock() > self.deadline:
            raise UserError(f"{self.budget.what} took more than {self.budget.max_seconds:g} s to read (the limit); "
                            "it may be crafted to exhaust the server.")

    def bytes(self, n: int) -> None:
        self.read += n
        if self.read > self.budget.max_bytes:
            limit = _size(self.budget.max_bytes)
            raise UserError(f"{self.budget.what} {self.budget.bytes_phrase} more than {limit}; the limit is {limit}.")
        self.tick()

    def items(self, kind: str, n: int = 1) -> None:
        self.counts[kind] += n
        cap = self._caps[kind]
        if self.counts[kind] > cap:
            raise UserError(f"{self.budget.what} has more than {cap:,} {kind}; the limit is {cap:,}.")
        if self.counts[kind] & 1023 == 0 or n > 1:  # the clock every thousand items: cheap beside the parse
            self.tick()

    def reader(self, stream) -> "_Counted":
        """`stream` as a file-like object whose reads are spent as bytes (refused past the cap, not after)."""
        return _Counted(stream, self)


class _Counted:
    def __init__(self, stream, spending: Spending) -> None:
        self.stream, self.spending = stream, spending

    def read(self, size: int = -1) -> bytes:
        room = self.spending.budget.max_bytes - self.spending.read + 1  # one past the cap proves it is passed
        data = self.stream.read(min(size, room) if size is not None and size >= 0 else room)
        self.spending.bytes(len(data))
        return data
