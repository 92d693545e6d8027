"""The engine flags every corpus command shares (--engine, --workers, --ray-address, ... and --batch-size)."""
from __future__ import annotations

import argparse

from backend.cli.params import add_flags
from backend.corpus.engine import EngineConfig

ENGINE_FLAGS = ("engine", "workers", "cpus_per_worker", "gpus_per_worker", "ray_address", "max_retries")
DEFAULT_BATCH = 256


def add_engine_flags(parser: argparse.ArgumentParser) -> None:
    add_flags(parser, EngineConfig, ENGINE_FLAGS)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH,
                        help="documents per model slice in a worker (default: %(default)s)")
