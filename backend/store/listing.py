"""Stored artifacts read by feature and action rather than through one cache key: what a feature lists (its
shipped example texts). How long computations took is kept apart (`backend.store.timings`)."""
from __future__ import annotations

from typing import Any

from backend.store.codec import loads
from backend.store.db import connect


def values_of(feature: str, action: str) -> list[Any]:
    """Every stored result of (feature, action), decoded, in the order of their parameters."""
    with connect() as con:
        rows = con.execute("SELECT payload FROM artifacts WHERE feature = ? AND action = ? ORDER BY params",
                           [feature, action]).fetchall()
    return [loads(payload) for (payload,) in rows]
