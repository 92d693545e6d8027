"""Run a task's shards on the engine its EngineConfig names: `local` (backend.corpus.engine) or `ray` (a Ray Data
actor pool, backend.corpus.ray_engine; Ray itself is imported only when used)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from backend.corpus.engine import EngineConfig, ShardTask, run_local
from backend.corpus.output import ShardResult
from backend.corpus.ray_engine import run_on_ray
from backend.corpus.shards import Shard


def run_shards(task: ShardTask, shards: list[Shard], out_dir: str | Path,
               config: EngineConfig) -> Iterator[ShardResult]:
    """Results as shards finish (any order on Ray)."""
    if not shards:
        return iter(())
    if config.engine == "ray":
        return run_on_ray(task, shards, out_dir, config)
    return run_local(task, shards, out_dir)
