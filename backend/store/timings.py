"""How long computations took on this machine, with the CPU conditions they ran under: what estimates are made from
(`backend.estimates`). One row per finished computed run of a verb, and one per calibration probe of a model (a
short forward timed). Rows are measurements of this machine only: shipped reference artifacts carry another
machine's compute time and never enter here."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.store.db import connect_with

PROBE = "probe"  # the `action` of a calibration probe row (its feature is empty)

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS timings (
        feature VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        fingerprint VARCHAR NOT NULL,
        work DOUBLE NOT NULL,
        seconds DOUBLE NOT NULL,
        share DOUBLE NOT NULL,
        threads INTEGER NOT NULL,
        cores INTEGER NOT NULL,
        nice INTEGER NOT NULL,
        created TIMESTAMP NOT NULL DEFAULT current_timestamp)""",
]


@dataclass(frozen=True)
class Timing:
    """One measured computation. work: its size in the verb's own units (`backend.estimates.work`); share: the
    share of a core one thread at its nice value got when it ran (`backend.estimates.load`); threads: torch's
    intra-op threads; nice: the computing thread's nice value."""

    feature: str
    action: str
    fingerprint: str
    work: float
    seconds: float
    share: float
    threads: int
    cores: int
    nice: int


def record_timing(timing: Timing, path: Path | None = None) -> None:
    """Add a timing to the store at `path` (default: the configured one)."""
    with connect_with(_SCHEMA, path) as con:
        con.execute("INSERT INTO timings (feature, action, fingerprint, work, seconds, share, threads, cores, nice) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [timing.feature, timing.action, timing.fingerprint, timing.work, timing.seconds, timing.share,
                     timing.threads, timing.cores, timing.nice])


def recent_timings(feature: str, action: str, fingerprint: str, limit: int = 8) -> list[Timing]:
    """The newest `limit` timings of (feature, action) on this model, newest first."""
    with connect_with(_SCHEMA) as con:
        rows = con.execute("SELECT feature, action, fingerprint, work, seconds, share, threads, cores, nice "
                           "FROM timings WHERE feature = ? AND action = ? AND fingerprint = ? "
                           "ORDER BY created DESC, rowid DESC LIMIT ?",
                           [feature, action, fingerprint, limit]).fetchall()
    return [Timing(*row) for row in rows]
