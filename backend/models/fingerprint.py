"""A model fingerprint that keys every cached artifact: config + weight files, cheap to recompute.

Hashing whole weight files would take seconds for large models. Instead each safetensors file
contributes its name, size, its header (dtypes, shapes, offsets of every tensor) and 16 evenly
spaced 64 KiB samples of its bytes: any re-quantisation, fine-tune or swapped file changes it.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

SAMPLES = 16
SAMPLE_BYTES = 64 * 1024


def _file_digest(path: Path, digest: "hashlib._Hash") -> None:
    size = path.stat().st_size
    digest.update(f"{path.name}:{size}".encode())
    with path.open("rb") as f:
        header_len = int.from_bytes(f.read(8), "little")
        digest.update(f.read(min(header_len, 100_000_000)))
        for i in range(SAMPLES):
            f.seek(size * i // SAMPLES)
            digest.update(f.read(SAMPLE_BYTES))


def fingerprint_dir(directory: Path) -> str:
    """16-hex-digit fingerprint of a model directory (config.json + *.safetensors)."""
    directory = Path(directory)
    digest = hashlib.sha256()
    config = json.loads((directory / "config.json").read_text())
    config.pop("transformers_version", None)  # the same weights saved by another version are the same model
    digest.update(json.dumps(config, sort_keys=True).encode())
    weights = sorted(directory.glob("*.safetensors"))
    if not weights:
        raise FileNotFoundError(f"no safetensors weights in {directory}")
    for path in weights:
        _file_digest(path, digest)
    return digest.hexdigest()[:16]
