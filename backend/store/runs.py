"""Run history: list, count, filter, reopen and export runs (deleting them: `backend.store.cleanup`)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from backend.errors import UserError
from backend.params import Config, param
from backend.store.codec import loads, to_jsonable
from backend.store.db import connect

EXPORT_FORMATS = ("csv", "parquet", "json")


@dataclass(frozen=True)
class RunFilter(Config):
    feature: str | None = None
    model_id: str | None = None
    cached: bool | None = None
    session: str | None = None  # None: every session's runs
    status: str | None = None  # 'done' or 'stopped' (None: both)
    limit: int = param(1000, "newest runs to show", ge=1, le=1_000_000)


def list_runs(filt: RunFilter = RunFilter()) -> pd.DataFrame:
    """Runs, newest first, as a DataFrame (columns of the `runs` table)."""
    where, args = _where(filt)
    with connect() as con:
        return con.execute(f"SELECT * FROM runs {where} ORDER BY created DESC LIMIT ?", [*args, filt.limit]).df()


def _where(filt: RunFilter) -> tuple[str, list]:
    clauses, args = [], []
    for column, value in (("feature", filt.feature), ("model_id", filt.model_id), ("cached", filt.cached),
                          ("session", filt.session), ("status", filt.status)):
        if value is not None:
            clauses.append(f"{column} = ?")
            args.append(value)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), args


def reopen(run_id: str) -> tuple[dict, Any]:
    """(run row, decoded result) of a past run."""
    with connect() as con:
        cur = con.execute("SELECT r.*, a.payload FROM runs r JOIN artifacts a ON a.key = r.artifact_key "
                          "WHERE r.run_id = ?", [run_id])
        row = cur.fetchone()
        columns = [d[0] for d in cur.description]
    if row is None:
        raise UserError(_missing(run_id))
    record = dict(zip(columns, row))
    return record, loads(record.pop("payload"))


def _missing(run_id: str) -> str:
    """Why a run has no result to reopen: its user stopped it, or it is gone."""
    with connect() as con:
        row = con.execute("SELECT status, seconds FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is not None and row[0] == "stopped":
        return f"Run {run_id} was stopped by its user after {row[1]:.0f} s; nothing was stored for it."
    return f"No stored result for run {run_id!r} (it may have been deleted)."


def count_runs(filt: RunFilter = RunFilter()) -> int:
    """How many runs match (the limit aside): what Home and Runs both show as the run count."""
    clauses, args = _where(filt)
    with connect() as con:
        return con.execute(f"SELECT count(*) FROM runs {clauses}", args).fetchone()[0]


def export_runs(frame: pd.DataFrame, fmt: str) -> bytes:
    """The given runs as CSV, Parquet or JSON bytes (for download buttons and the CLI)."""
    if fmt not in EXPORT_FORMATS:
        raise UserError(f"Unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}.")
    frame = frame.copy()
    if "created" in frame:
        frame["created"] = frame["created"].astype(str)
    if fmt == "csv":
        return frame.to_csv(index=False).encode()
    if fmt == "json":
        return json.dumps(frame.to_dict(orient="records"), indent=1, default=str).encode()
    import io

    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def export_result(run_id: str) -> bytes:
    """One run's full result as readable JSON."""
    return result_json(*reopen(run_id))


def result_json(record: dict, value) -> bytes:
    """A reopened run (`reopen`'s record and value) as readable JSON."""
    return json.dumps({"run": {k: str(v) for k, v in record.items()}, "result": to_jsonable(value)},
                      indent=1).encode()
