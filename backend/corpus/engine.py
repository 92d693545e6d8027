"""What both engines share: the engine settings, the task and worker protocols, `process_shard` (so the `local`
engine here and the `ray` one in backend.corpus.ray_engine write the same rows); backend.corpus.dispatch picks one.

A task is a picklable object with `key() -> dict` (what its outputs depend on, incl. the model fingerprint),
`fingerprint` and `open() -> worker`, called once per process / actor (loads the model); a worker has
`run(shard) -> (pyarrow.Table, notices)` and reads the shard streamed.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from backend.corpus.output import DONE, EMPTY, FAILED, ShardResult, shard_file, write_shard
from backend.corpus.shards import Shard
from backend.errors import UserError
from backend.params import Config, param

ENGINES = ("local", "ray")
ENV_PREFIXES = ("DASH_", "HF_")  # settings a worker process must see as the driver does


class Worker(Protocol):
    fingerprint: str

    def run(self, shard: Shard) -> tuple[Any, list[str]]: ...


class ShardTask(Protocol):
    fingerprint: str

    def key(self) -> dict: ...

    def open(self) -> Worker: ...


@dataclass(frozen=True)
class EngineConfig(Config):
    """How a corpus job runs; what it computes is the task's config."""

    engine: str = param("local", "local: this process; ray: a Ray Data actor pool", choices=ENGINES)
    workers: int = param(0, "ray: actors, each loading the model once (0: one per CPU of the cluster)", ge=0)
    cpus_per_worker: int = param(0, "ray: CPUs (and torch threads) per actor (0: the cluster's CPUs / workers)",
                                 ge=0)
    gpus_per_worker: float = param(-1.0, "ray: GPUs per actor (-1: 1 when the cluster has GPUs, else 0)", ge=-1)
    ray_address: str = param("", "ray: address of an existing cluster (empty: start a local Ray on this "
                                 "machine's cores)")
    max_retries: int = param(3, "ray: restarts of a dead actor and retries of its shard", ge=0)


def worker_env() -> dict[str, str]:
    """The driver's settings, applied in every worker before it loads anything."""
    return {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)}


def process_shard(worker: Worker, shard: Shard, out_dir: str | Path) -> ShardResult:
    """Run one shard and write its file; a bad shard (unreadable, wrong schema) becomes a FAILED result."""
    start = time.perf_counter()
    base = dict(shard_id=shard.id, index=shard.index, path=shard.path, fingerprint=worker.fingerprint)
    try:
        table, notices = worker.run(shard)
    except UserError as err:
        return ShardResult(**base, status=FAILED, error=str(err), seconds=time.perf_counter() - start)
    if table.num_rows == 0:
        return ShardResult(**base, status=EMPTY, seconds=time.perf_counter() - start,
                           notices=tuple(notices) or ("no non-empty document",))
    checksum = write_shard(table, shard_file(out_dir, shard.index, shard.id))
    return ShardResult(**base, status=DONE, rows=table.num_rows, checksum=checksum,
                       seconds=time.perf_counter() - start, notices=tuple(notices))


def run_local(task: ShardTask, shards: list[Shard], out_dir: str | Path) -> Iterator[ShardResult]:
    """The `local` engine: this process, one shard after another."""
    worker = task.open()
    for shard in shards:
        yield process_shard(worker, shard, out_dir)
