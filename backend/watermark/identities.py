"""The identity registry: models and users addressed like IP networks and hosts.

A model has an integer address `m`; its users have addresses `m.u`. Keys are not stored: they are
re-derived from the master secret (backend.watermark.keys) whenever needed. Every call is one short
transaction on the registry's tables (backend.store.identity_tables); this module holds the rules: names, the
demo identity's reserved address, the messages.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import pandas as pd

from backend.errors import UserError
from backend.store.identity_tables import identity_tables
from backend.unicode_text import visible
from backend.watermark.keys import DEMO_MODEL_ADDRESS

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
    with identity_tables() as tables:
        if address is None:
            address = tables.next_model_address(skipping=DEMO_MODEL_ADDRESS)
        elif not 1 <= int(address) <= 2**31 - 1:
            raise UserError("A model address must be a positive integer.")
        if (int(address) == DEMO_MODEL_ADDRESS) != demo:
            raise UserError(f"Model address {DEMO_MODEL_ADDRESS} is reserved for the demo identity, whose keys come "
                            "from a public secret; choose another address." if not demo else
                            "The demo identity has its own reserved address.")
        if tables.has_model(int(address)):
            raise UserError(f"Model address {address} is already taken.")
        tables.add_model(int(address), name)
    return ModelIdentity(address=int(address), name=name)


def add_user(model_address: int, label: str, user_address: int | None = None) -> UserIdentity:
    label = _clean_name(label, "user label")
    with identity_tables() as tables:
        if not tables.has_model(int(model_address)):
            raise UserError(f"No model with address {model_address}; add the model first.")
        if user_address is None:
            user_address = tables.next_user_address(int(model_address))
        elif not 1 <= int(user_address) <= 2**31 - 1:
            raise UserError("A user address must be a positive integer.")
        if tables.has_user(int(model_address), int(user_address)):
            raise UserError(f"User address {model_address}.{user_address} is already taken.")
        tables.add_user(int(model_address), int(user_address), label)
    return UserIdentity(model_address=int(model_address), user_address=int(user_address), label=label)


def bulk_add_users(model_address: int, count: int, prefix: str = "user") -> int:
    """Add `count` users under a model in one statement (benchmarks); returns how many were added."""
    if not 1 <= count <= MAX_BULK:
        raise UserError(f"Bulk creation takes 1 to {MAX_BULK:,} users at a time.")
    prefix = _clean_name(prefix, "label prefix")
    with identity_tables() as tables:
        if not tables.has_model(int(model_address)):
            raise UserError(f"No model with address {model_address}; add the model first.")
        start = tables.next_user_address(int(model_address))
        tables.add_numbered_users(int(model_address), start, count, prefix)
    return count


def remove_model(address: int) -> int:
    """Remove a model identity and its users; returns how many identities (model and users) were removed."""
    with identity_tables() as tables:
        return tables.remove_model(int(address))


def get_or_add_model(name: str) -> ModelIdentity:
    """The model identity with this name (the first one), created if missing."""
    with identity_tables() as tables:
        row = tables.first_model_named(name)
    return ModelIdentity(*row) if row else add_model(name)


def ensure_users(model_address: int, count: int, prefix: str = "user") -> list[UserIdentity]:
    """At least `count` users under the model (created as needed); returns the first `count`."""
    have = users_of(model_address)
    if len(have) < count:
        bulk_add_users(model_address, count - len(have), prefix)
        have = users_of(model_address)
    return have[:count]


def list_models() -> list[ModelIdentity]:
    with identity_tables() as tables:
        rows = tables.models()
    return [ModelIdentity(address=int(a), name=n) for a, n in rows]


def users_of(model_address: int) -> list[UserIdentity]:
    with identity_tables() as tables:
        rows = tables.users_of(int(model_address))
    return [UserIdentity(model_address=int(m), user_address=int(u), label=lab) for m, u, lab in rows]


def get_model(address: int) -> ModelIdentity:
    with identity_tables() as tables:
        row = tables.model(int(address))
    if row is None:
        raise UserError(f"No model identity with address {address}.")
    return ModelIdentity(address=int(row[0]), name=row[1])


def get_user(model_address: int, user_address: int) -> UserIdentity:
    with identity_tables() as tables:
        row = tables.user(int(model_address), int(user_address))
    if row is None:
        raise UserError(f"No user identity with address {model_address}.{user_address}.")
    return UserIdentity(model_address=int(row[0]), user_address=int(row[1]), label=row[2])


def all_users_by_model() -> dict[int, list[int]]:
    """{model address: [user addresses]} for the whole registry in one query (detection)."""
    with identity_tables() as tables:
        frame = tables.user_addresses()
    out: dict[int, list[int]] = {}
    for model, group in frame.groupby("model_address", sort=True):
        out[int(model)] = [int(u) for u in group["user_address"]]
    return out


def summary_frame() -> pd.DataFrame:
    """One row per model: address, name, number of users (for tables and the CLI)."""
    with identity_tables() as tables:
        return tables.summary()


def users_frame(model_address: int, limit: int = 1000) -> pd.DataFrame:
    if not 1 <= int(limit) <= 2**62:  # DuckDB refuses a negative LIMIT with a traceback-shaped error
        raise UserError(f"--limit must be a positive whole number, got {limit}.")
    with identity_tables() as tables:
        return tables.users_frame(int(model_address), int(limit))
