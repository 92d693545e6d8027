"""The process's peak resident memory over a block, from /proc/self/status (Linux)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


@dataclass
class Extra:
    mb: float = 0.0


@contextlib.contextmanager
def extra_peak_rss():
    """Yields an Extra whose .mb is, after the block, the peak RSS during it minus the RSS before it.

    The kernel's high-water mark is reset first (clear_refs 5), so an earlier peak does not hide this one;
    where that is not allowed the block's end RSS is the fallback (a transient peak would be missed).
    """
    extra = Extra()
    before = _status_kb("VmRSS")
    try:
        Path("/proc/self/clear_refs").write_text("5")
        field = "VmHWM"
    except OSError:
        field = "VmRSS"
    try:
        yield extra
    finally:
        extra.mb = (_status_kb(field) - before) / 1024
