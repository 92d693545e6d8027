"""The identity registry's tables: models (`wm_models`) and their users (`wm_users`) addressed like IP networks and
hosts, and whether the demo identity was removed (`wm_demo_state`). Every read and write of them is here; the rules
(names, reserved addresses, messages) are the watermark's (backend.watermark.identities, demo).

`identity_tables()` opens one short transaction on the store with the tables in place, so the steps of one
registration (the next free address, is it taken, insert) cannot interleave with another session's. Inside
`in_memory()`, this context's registry is a throw-away one in memory instead (backend.watermark.throwaway).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar

import duckdb
import pandas as pd

from backend.store.db import connect_with

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS wm_models (
        address INTEGER PRIMARY KEY,
        name VARCHAR NOT NULL,
        created TIMESTAMP NOT NULL DEFAULT current_timestamp)""",
    """CREATE TABLE IF NOT EXISTS wm_users (
        model_address INTEGER NOT NULL,
        user_address INTEGER NOT NULL,
        label VARCHAR NOT NULL,
        created TIMESTAMP NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (model_address, user_address))""",
]
_WITH_DEMO_STATE = SCHEMA + ["CREATE TABLE IF NOT EXISTS wm_demo_state (id INTEGER PRIMARY KEY, "
                             "removed BOOLEAN NOT NULL)"]

# a throw-away registry in use in this context: every transaction reads and writes it instead of the store
_scoped: ContextVar[duckdb.DuckDBPyConnection | None] = ContextVar("scoped_identity_registry", default=None)


class IdentityTables:
    """The registry's tables on one open transaction. Addresses are integers; rows come back as tuples."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self._con = con

    def _one(self, sql: str, args: list) -> tuple | None:
        return self._con.execute(sql, args).fetchone()

    # ---------------------------------------------------------------- models
    def next_model_address(self, skipping: int) -> int:
        """One past the highest model address, `skipping` (a reserved address) left out of the highest."""
        return self._one("SELECT coalesce(max(address), 0) + 1 FROM wm_models WHERE address <> ?", [skipping])[0]

    def has_model(self, address: int) -> bool:
        return self._one("SELECT 1 FROM wm_models WHERE address = ?", [address]) is not None

    def add_model(self, address: int, name: str) -> None:
        self._con.execute("INSERT INTO wm_models (address, name) VALUES (?, ?)", [address, name])

    def remove_model(self, address: int) -> int:
        """Remove a model and its users; returns how many rows (users and model) went."""
        users = self._one("SELECT count(*) FROM wm_users WHERE model_address = ?", [address])[0]
        self._con.execute("DELETE FROM wm_users WHERE model_address = ?", [address])
        models = self._con.execute("DELETE FROM wm_models WHERE address = ? RETURNING address", [address]).fetchall()
        return users + len(models)

    def model(self, address: int) -> tuple[int, str] | None:
        return self._one("SELECT address, name FROM wm_models WHERE address = ?", [address])

    def first_model_named(self, name: str) -> tuple[int, str] | None:
        return self._one("SELECT address, name FROM wm_models WHERE name = ? ORDER BY address LIMIT 1", [name])

    def models(self) -> list[tuple[int, str]]:
        return self._con.execute("SELECT address, name FROM wm_models ORDER BY address").fetchall()

    def summary(self) -> pd.DataFrame:
        """One row per model: address, name, number of users."""
        return self._con.execute("SELECT m.address, m.name, count(u.user_address) AS users FROM wm_models m "
                                 "LEFT JOIN wm_users u ON u.model_address = m.address GROUP BY 1, 2 ORDER BY 1").df()

    # ---------------------------------------------------------------- users
    def next_user_address(self, model_address: int) -> int:
        return self._one("SELECT coalesce(max(user_address), 0) + 1 FROM wm_users WHERE model_address = ?",
                         [model_address])[0]

    def has_user(self, model_address: int, user_address: int) -> bool:
        return self._one("SELECT 1 FROM wm_users WHERE model_address = ? AND user_address = ?",
                         [model_address, user_address]) is not None

    def add_user(self, model_address: int, user_address: int, label: str) -> None:
        self._con.execute("INSERT INTO wm_users (model_address, user_address, label) VALUES (?, ?, ?)",
                          [model_address, user_address, label])

    def add_numbered_users(self, model_address: int, start: int, count: int, prefix: str) -> None:
        """Users start .. start + count - 1 labelled `<prefix>-<address>`, in one statement."""
        self._con.execute("INSERT INTO wm_users (model_address, user_address, label) "
                          "SELECT ?, ? + i, ? || '-' || CAST(? + i AS VARCHAR) FROM range(?) t(i)",
                          [model_address, start, prefix, start, count])

    def user(self, model_address: int, user_address: int) -> tuple[int, int, str] | None:
        return self._one("SELECT model_address, user_address, label FROM wm_users WHERE model_address = ? "
                         "AND user_address = ?", [model_address, user_address])

    def users_of(self, model_address: int) -> list[tuple[int, int, str]]:
        return self._con.execute("SELECT model_address, user_address, label FROM wm_users WHERE model_address = ? "
                                 "ORDER BY user_address", [model_address]).fetchall()

    def user_addresses(self) -> pd.DataFrame:
        """Every (model_address, user_address), ordered."""
        return self._con.execute("SELECT model_address, user_address FROM wm_users ORDER BY 1, 2").df()

    def users_frame(self, model_address: int, limit: int) -> pd.DataFrame:
        """A model's users (address `m.u`, label, created), the first `limit` by address."""
        return self._con.execute("SELECT model_address || '.' || user_address AS address, label, created FROM wm_users "
                                 "WHERE model_address = ? ORDER BY user_address LIMIT ?", [model_address, limit]).df()


@contextmanager
def identity_tables() -> Iterator[IdentityTables]:
    """The registry's tables on one short store transaction (the throw-away registry's, inside `in_memory()`)."""
    scoped = _scoped.get()
    with nullcontext(scoped) if scoped is not None else connect_with(SCHEMA) as con:
        yield IdentityTables(con)


@contextmanager
def in_memory() -> Iterator[None]:
    """Inside the block, this context's registry is a new empty one in memory, dropped at the end."""
    con = duckdb.connect(":memory:")
    for statement in SCHEMA:
        con.execute(statement)
    token = _scoped.set(con)
    try:
        yield
    finally:
        _scoped.reset(token)
        con.close()


def demo_removed() -> bool:
    """Whether the demo identity was removed from this store (then it is not re-created on a fresh registry)."""
    with connect_with(_WITH_DEMO_STATE) as con:
        row = con.execute("SELECT removed FROM wm_demo_state WHERE id = 1").fetchone()
    return bool(row and row[0])


def set_demo_removed(removed: bool) -> None:
    with connect_with(_WITH_DEMO_STATE) as con:
        con.execute("INSERT INTO wm_demo_state VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET removed = excluded.removed",
                    [removed])
