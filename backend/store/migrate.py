"""Bring a store file written by an older version up to the current schema (once per file and process).

Each step checks the schema itself, so a current store costs one catalogue query and nothing else."""
from __future__ import annotations

import duckdb

from backend.store.origin import COMPUTED, REFERENCE
from backend.store.reference_files import reference_keys


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    if not _has_column(con, "artifacts", "origin"):
        _add_origin(con)


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    return con.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = ? AND column_name = ?",
                       [table, column]).fetchone()[0] > 0


def _add_origin(con: duckdb.DuckDBPyConnection) -> None:
    """Stores from before origins: their reference artifacts were imported unmarked, so a key of the reference set
    is a reference artifact; every other row was computed here."""
    keys = sorted(reference_keys())
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"ALTER TABLE artifacts ADD COLUMN origin VARCHAR DEFAULT '{COMPUTED}'")
        con.execute("UPDATE artifacts SET origin = ? WHERE key IN (SELECT unnest(?))", [REFERENCE, keys])
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
