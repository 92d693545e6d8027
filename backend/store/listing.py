"""Stored artifacts read by feature and action rather than through one cache key: what a feature lists (its
shipped example texts) or learns from (how long its earlier computations took on a model)."""
from __future__ import annotations

import json
from typing import Any

from backend.store.codec import loads
from backend.store.db import connect
from backend.store.origin import COMPUTED


def values_of(feature: str, action: str) -> list[Any]:
    """Every stored result of (feature, action), decoded, in the order of their parameters."""
    with connect() as con:
        rows = con.execute("SELECT payload FROM artifacts WHERE feature = ? AND action = ? ORDER BY params",
                           [feature, action]).fetchall()
    return [loads(payload) for (payload,) in rows]


def compute_seconds_of(feature: str, action: str, fingerprint: str) -> list[tuple[dict, float]]:
    """(parameters, seconds it took) of each result of (feature, action) computed in this store on the model with
    this fingerprint (shipped and imported results took their time elsewhere)."""
    with connect() as con:
        rows = con.execute("SELECT params, compute_seconds FROM artifacts WHERE feature = ? AND action = ? AND "
                           "fingerprint = ? AND origin = ?", [feature, action, fingerprint, COMPUTED]).fetchall()
    return [(json.loads(params), seconds) for params, seconds in rows]
