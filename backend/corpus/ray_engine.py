"""The Ray engine: Ray Data over the pending shards (`from_items`), `map_batches` with an actor pool whose
actors load the model once (`task.open()` in the constructor) and process one shard per call. Ray restarts a
dead actor and retries its shard (`max_restarts` / `max_task_retries`); a shard's file is written atomically,
so a retried shard neither duplicates nor loses rows. GPU actors (`num_gpus`) when the cluster has GPUs.
Each actor reserves one logical CPU (asking Ray Data for more stalled its actor pool on a 2-CPU machine) and
runs torch on `cpus_per_worker` threads (default: the cluster's CPUs shared among the workers).

`--ray-address` connects to an existing cluster (its nodes need this repository and its requirements
installed); otherwise a local Ray starts with this machine's cores.
"""
from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

from backend.config import REPO_ROOT
from backend.corpus.engine import EngineConfig, ShardTask, process_shard, worker_env
from backend.corpus.output import ShardResult
from backend.corpus.shards import Shard
from backend.errors import UserError


def require_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise UserError("The ray engine needs Ray: install the pinned requirements (`make prepare`), or use "
                        "--engine local.") from None
    return ray


def ensure_ray(config: EngineConfig, num_cpus: int | None = None):
    """Connect to `config.ray_address`, or start a local Ray on this machine's cores (kept for the process)."""
    ray = require_ray()
    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if str(REPO_ROOT) not in paths:  # local workers inherit the driver's environment: they import backend
            os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *filter(None, paths)])
        if config.ray_address:
            try:
                ray.init(address=config.ray_address, log_to_driver=False,
                         runtime_env={"env_vars": {"PYTHONPATH": str(REPO_ROOT)}})
            except (ConnectionError, ValueError, RuntimeError) as err:
                raise UserError(f"Cannot connect to the Ray cluster at {config.ray_address!r}: "
                                f"{str(err).splitlines()[0]}") from None
        else:
            ray.init(num_cpus=num_cpus or os.cpu_count(), include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    return ray


class ShardActor:
    """One per Ray actor: settings, torch threads and the task's worker (the model) set up once."""

    def __init__(self, task: ShardTask, env: dict[str, str], out_dir: str, threads: int) -> None:
        os.environ.update(env)
        import torch

        from backend.features import load_all

        load_all()  # a fresh worker process: every registered variant, as in the driver
        torch.set_num_threads(max(threads, 1))
        self.worker = task.open()
        self.out_dir = out_dir

    def __call__(self, batch: dict) -> dict:
        results = []
        for index, path, size, mtime in zip(batch["index"], batch["path"], batch["size"], batch["mtime_ns"]):
            shard = Shard(index=int(index), path=str(path), size=int(size), mtime_ns=int(mtime))
            results.append(json.dumps(process_shard(self.worker, shard, self.out_dir).to_row()))
        return {"result": results}


def _resources(ray, config: EngineConfig) -> tuple[int, int, float]:
    cluster = ray.cluster_resources()
    cpus = max(int(cluster.get("CPU", 1)), 1)
    gpus = cluster.get("GPU", 0)
    per_gpu = (1.0 if gpus else 0.0) if config.gpus_per_worker < 0 else config.gpus_per_worker
    if per_gpu and not gpus:
        raise UserError("gpus_per_worker > 0 but the Ray cluster has no GPU.")
    workers = config.workers or (int(gpus // per_gpu) if per_gpu else cpus)
    per_cpu = config.cpus_per_worker or max(cpus // max(workers, 1), 1)
    return max(workers, 1), per_cpu, per_gpu


def run_on_ray(task: ShardTask, shards: list[Shard], out_dir: str | Path,
               config: EngineConfig) -> Iterator[ShardResult]:
    ray = ensure_ray(config)
    workers, per_cpu, per_gpu = _resources(ray, config)
    env = worker_env()
    if per_gpu:
        env["DASH_DEVICE"] = "cuda"
    items = [{"index": s.index, "path": s.path, "size": s.size, "mtime_ns": s.mtime_ns} for s in shards]
    with warnings.catch_warnings():
        # Ray 2.60 has no named parameter for bounded actor restarts: they still go through the deprecated
        # **ray_remote_args (its default, unbounded retries, would loop forever on a shard that kills its worker).
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated", category=DeprecationWarning)
        dataset = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            ShardActor, batch_size=1, compute=ray.data.ActorPoolStrategy(size=min(workers, len(items))),
            fn_constructor_kwargs={"task": task, "env": env, "out_dir": str(out_dir), "threads": per_cpu},
            num_cpus=1, num_gpus=per_gpu, max_restarts=config.max_retries, max_task_retries=config.max_retries)
    for row in dataset.iter_rows():
        data = json.loads(row["result"])
        yield ShardResult(**{**data, "notices": tuple(data["notices"])})
