"""The identity registry in DuckDB: models and users addressed like IP networks and hosts.

A model has an integer address `m`; its users have addresses `m.u`. Keys are not stored: they are
re-derived from the master secret (backend.watermark.keys) whenever needed. Every call opens the
shared store for one short transaction (backend.store.db.connect).
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass

import duckdb

import pandas as pd

from backend.errors import UserError
from backend.store.db import connect_with
from backend.unicode_text import visible
from backend.watermark.keys import DEMO_MODEL_ADDRESS

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
MAX_BULK = 200_000  # one bulk creation (CLI, benchmarks, tests)
PAGE_MAX_BULK = 10_000  # one bulk creation from the page, after a confirmation (pages/watermark.py)


@dataclass(frozen=True)
class ModelIdentity:
    address: int
    name: str


@dataclass(frozen=True)
class UserIdentity:
    model_address: int
    user_address: int
    label: str

    @property
    def full_address(self) -> str:
        return f"{self.model_address}.{self.user_address}"


# a throw-away registry in use in this context (backend.watermark.throwaway): every call reads and writes it instead
_scoped: ContextVar[duckdb.DuckDBPyConnection | None] = ContextVar("watermark_scoped_registry", default=None)


def _tx():
    """One short store transaction with this module's tables in place (a throw-away registry's, while in use)."""
    scoped = _scoped.get()
    return nullcontext(scoped) if scoped is not None else connect_with(SCHEMA)


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


def _clean_name(text: str, what: str) -> str:
    text = (text or "").strip()
    if not text:
        raise UserError(f"The {what} must not be empty.")
    if len(text) > 200:
        raise UserError(f"The {what} is too long (200 characters at most).")
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in text):  # a newline would forge a table row
        raise UserError(f"The {what} must not contain line breaks or control characters (got {visible(text)}).")
    # format characters (a bidi override) are kept as typed and written out wherever the name is shown
    return text


def add_model(name: str, address: int | None = None, *, demo: bool = False) -> ModelIdentity:
    """Register a model identity; the address is the next free one unless given. The demo identity's reserved
    address (its keys come from the public demo secret) is taken only with `demo` (backend.watermark.demo)."""
    name = _clean_name(name, "model name")
    with _tx() as con:
        if address is None:
            address = con.execute("SELECT coalesce(max(address), 0) + 1 FROM wm_models WHERE address <> ?",
                                  [DEMO_MODEL_ADDRESS]).fetchone()[0]
        elif not 1 <= int(address) <= 2**31 - 1:
            raise UserError("A model address must be a positive integer.")
        if (int(address) == DEMO_MODEL_ADDRESS) != demo:
            raise UserError(f"Model address {DEMO_MODEL_ADDRESS} is reserved for the demo identity, whose keys come "
                            "from a public secret; choose another address." if not demo else
                            "The demo identity has its own reserved address.")
        if con.execute("SELECT 1 FROM wm_models WHERE address = ?", [int(address)]).fetchone():
            raise UserError(f"Model address {address} is already taken.")
        con.execute("INSERT INTO wm_models (address, name) VALUES (?, ?)", [int(address), name])
    return ModelIdentity(address=int(address), name=name)


def add_user(model_address: int, label: str, user_address: int | None = None) -> UserIdentity:
    label = _clean_name(label, "user label")
    with _tx() as con:
        if not con.execute("SELECT 1 FROM wm_models WHERE address = ?", [int(model_address)]).fetchone():
            raise UserError(f"No model with address {model_address}; add the model first.")
        if user_address is None:
            user_address = con.execute("SELECT coalesce(max(user_address), 0) + 1 FROM wm_users "
                                       "WHERE model_address = ?", [int(model_address)]).fetchone()[0]
        elif not 1 <= int(user_address) <= 2**31 - 1:
            raise UserError("A user address must be a positive integer.")
        if con.execute("SELECT 1 FROM wm_users WHERE model_address = ? AND user_address = ?",
                       [int(model_address), int(user_address)]).fetchone():
            raise UserError(f"User address {model_address}.{user_address} is already taken.")
        con.execute("INSERT INTO wm_users (model_address, user_address, label) VALUES (?, ?, ?)",
                    [int(model_address), int(user_address), label])
    return UserIdentity(model_address=int(model_address), user_address=int(user_address), label=label)


def bulk_add_users(model_address: int, count: int, prefix: str = "user") -> int:
    """Add `count` users under a model in one statement (benchmarks); returns how many were added."""
    if not 1 <= count <= MAX_BULK:
        raise UserError(f"Bulk creation takes 1 to {MAX_BULK:,} users at a time.")
    prefix = _clean_name(prefix, "label prefix")
    with _tx() as con:
        if not con.execute("SELECT 1 FROM wm_models WHERE address = ?", [int(model_address)]).fetchone():
            raise UserError(f"No model with address {model_address}; add the model first.")
        start = con.execute("SELECT coalesce(max(user_address), 0) + 1 FROM wm_users WHERE model_address = ?",
                            [int(model_address)]).fetchone()[0]
        con.execute("INSERT INTO wm_users (model_address, user_address, label) "
                    "SELECT ?, ? + i, ? || '-' || CAST(? + i AS VARCHAR) FROM range(?) t(i)",
                    [int(model_address), start, prefix, start, count])
    return count


def remove_model(address: int) -> int:
    """Remove a model identity and its users; returns how many identities (model and users) were removed."""
    with _tx() as con:
        users = con.execute("SELECT count(*) FROM wm_users WHERE model_address = ?", [int(address)]).fetchone()[0]
        con.execute("DELETE FROM wm_users WHERE model_address = ?", [int(address)])
        models = con.execute("DELETE FROM wm_models WHERE address = ? RETURNING address", [int(address)]).fetchall()
    return users + len(models)


def get_or_add_model(name: str) -> ModelIdentity:
    """The model identity with this name (the first one), created if missing."""
    with _tx() as con:
        row = con.execute("SELECT address, name FROM wm_models WHERE name = ? ORDER BY address LIMIT 1",
                          [name]).fetchone()
    return ModelIdentity(*row) if row else add_model(name)


def ensure_users(model_address: int, count: int, prefix: str = "user") -> list[UserIdentity]:
    """At least `count` users under the model (created as needed); returns the first `count`."""
    have = users_of(model_address)
    if len(have) < count:
        bulk_add_users(model_address, count - len(have), prefix)
        have = users_of(model_address)
    return have[:count]


def list_models() -> list[ModelIdentity]:
    with _tx() as con:
        rows = con.execute("SELECT address, name FROM wm_models ORDER BY address").fetchall()
    return [ModelIdentity(address=int(a), name=n) for a, n in rows]


def users_of(model_address: int) -> list[UserIdentity]:
    with _tx() as con:
        rows = con.execute("SELECT model_address, user_address, label FROM wm_users WHERE model_address = ? "
                           "ORDER BY user_address", [int(model_address)]).fetchall()
    return [UserIdentity(model_address=int(m), user_address=int(u), label=lab) for m, u, lab in rows]


def get_model(address: int) -> ModelIdentity:
    with _tx() as con:
        row = con.execute("SELECT address, name FROM wm_models WHERE address = ?", [int(address)]).fetchone()
    if row is None:
        raise UserError(f"No model identity with address {address}.")
    return ModelIdentity(address=int(row[0]), name=row[1])


def get_user(model_address: int, user_address: int) -> UserIdentity:
    with _tx() as con:
        row = con.execute("SELECT model_address, user_address, label FROM wm_users WHERE model_address = ? "
                          "AND user_address = ?", [int(model_address), int(user_address)]).fetchone()
    if row is None:
        raise UserError(f"No user identity with address {model_address}.{user_address}.")
    return UserIdentity(model_address=int(row[0]), user_address=int(row[1]), label=row[2])


def all_users_by_model() -> dict[int, list[int]]:
    """{model address: [user addresses]} for the whole registry in one query (detection)."""
    with _tx() as con:
        frame = con.execute("SELECT model_address, user_address FROM wm_users ORDER BY 1, 2").df()
    out: dict[int, list[int]] = {}
    for model, group in frame.groupby("model_address", sort=True):
        out[int(model)] = [int(u) for u in group["user_address"]]
    return out


def summary_frame() -> pd.DataFrame:
    """One row per model: address, name, number of users (for tables and the CLI)."""
    with _tx() as con:
        return con.execute("SELECT m.address, m.name, count(u.user_address) AS users FROM wm_models m "
                           "LEFT JOIN wm_users u ON u.model_address = m.address GROUP BY 1, 2 ORDER BY 1").df()


def users_frame(model_address: int, limit: int = 1000) -> pd.DataFrame:
    if not 1 <= int(limit) <= 2**62:  # DuckDB refuses a negative LIMIT with a traceback-shaped error
        raise UserError(f"--limit must be a positive whole number, got {limit}.")
    with _tx() as con:
        return con.execute("SELECT model_address || '.' || user_address AS address, label, created FROM wm_users "
                           "WHERE model_address = ? ORDER BY user_address LIMIT ?",
                           [int(model_address), int(limit)]).df()
