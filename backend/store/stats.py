"""What the store holds: artifacts by origin and by feature, and run counts (Home, `store stats`)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from backend.store.db import connect, store_path
from backend.store.origin import ORIGINS


@dataclass(frozen=True)
class StoreStatus:
    """Counts over the whole store (every session). by_feature: {feature: {origin: artifacts}}."""

    path: str
    size_bytes: int
    artifacts: int
    runs: int
    computed_runs: int
    cached_runs: int
    by_origin: Mapping[str, int]
    by_feature: Mapping[str, Mapping[str, int]]

    def to_json(self) -> dict:
        return asdict(self)


def status() -> StoreStatus:
    with connect() as con:
        rows = con.execute("SELECT feature, origin, count(*) FROM artifacts GROUP BY ALL ORDER BY ALL").fetchall()
        computed, cached = con.execute("SELECT count(*) FILTER (NOT cached), count(*) FILTER (cached) "
                                       "FROM runs").fetchone()
    by_origin = dict.fromkeys(ORIGINS, 0)
    by_feature: dict[str, dict[str, int]] = {}
    for feature, origin, count in rows:
        by_origin[origin] = by_origin.get(origin, 0) + count
        by_feature.setdefault(feature, dict.fromkeys(ORIGINS, 0))[origin] = count
    path = store_path()
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*")
               if p.is_file() and not p.name.endswith(".wanted"))  # db.py's note between processes: not data
    return StoreStatus(path=str(path), size_bytes=size, artifacts=sum(by_origin.values()), runs=computed + cached,
                       computed_runs=computed, cached_runs=cached, by_origin=by_origin, by_feature=by_feature)
