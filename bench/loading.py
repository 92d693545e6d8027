"""Loading a model the way a benchmark run on this machine needs it (imported by the scripts beside it)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


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
