"""`python -m backend watermark scan --corpus CORPUS --out OUT.parquet --engine ray|local`."""
from __future__ import annotations

import sys

from backend.cli.params import add_flags, flag_values
from backend.corpus.cli import ENGINE_FLAGS, add_engine_flags
from backend.corpus.engine import EngineConfig

SCAN_FLAGS = ("method", "search", "model_address", "model_id")


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def cmd_scan(args) -> dict:
    from backend.watermark.scan import ScanConfig, scan

    config = ScanConfig(**flag_values(args, ScanConfig, SCAN_FLAGS))
    engine = EngineConfig(**flag_values(args, EngineConfig, ENGINE_FLAGS))
    summary = scan(args.corpus, config, engine, args.out, _progress)
    return {**summary.to_json(), "out": args.out}


def add_scan_command(actions) -> None:
    from backend.watermark.scan import ScanConfig

    sub = actions.add_parser("scan", help="detect watermarks in every document of a corpus (JSONL/Parquet/TXT "
                                          "shards; resumable; local or Ray)")
    sub.add_argument("--corpus", required=True, help="a file, a directory or a glob of JSONL / Parquet / TXT shards")
    sub.add_argument("--out", required=True, help="Parquet file with one row per document")
    add_flags(sub, ScanConfig, SCAN_FLAGS)
    add_engine_flags(sub)
    sub.set_defaults(handler=cmd_scan)
