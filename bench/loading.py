"""Loading a model the way a benchmark run on this machine needs it, and the flags such runs share
(imported by the scripts beside it)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def add_run_flags(parser, result_name: str) -> None:
    """--tokens, --threads and --out (default bench/results/<result_name>.json), as every decoding benchmark
    takes them."""
    parser.add_argument("--tokens", type=int, default=96, help="max new tokens per sequence")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / f"{result_name}.json"))


def loaded_model(model_id: str, threads: int):
    """The model's handle: offline (weights come from the local packages), torch on `threads` threads, every
    feature's strategies registered."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from backend.features import load_all
    from backend.models import load

    torch.set_num_threads(threads)
    load_all()
    return load(model_id)
