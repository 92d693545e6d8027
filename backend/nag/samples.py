"""The sample corpora shipped in data/nag/ (written by data/nag/build_samples.py)."""
from __future__ import annotations

from pathlib import Path

from backend.config import settings
from backend.corpus.documents import Document, iter_documents
from backend.errors import UserError


def sample_dir() -> Path:
    return settings().data_dir / "nag"


def pool_path() -> Path:
    return sample_dir() / "pool.jsonl"


def targets_path() -> Path:
    return sample_dir() / "targets.jsonl"


def heldout_path() -> Path:
    return sample_dir() / "heldout.jsonl"


def load_small(path: Path) -> list[Document]:
    """A small shipped file, whole (never used for user corpora, which are streamed)."""
    return list(iter_documents(path))


def domains() -> list[str]:
    """Domains that have sample targets, in file order."""
    seen: dict[str, None] = {}
    for doc in load_small(targets_path()):
        if doc.domain:
            seen.setdefault(doc.domain, None)
    return list(seen)


def sample_targets(domain: str) -> list[Document]:
    docs = [d for d in load_small(targets_path()) if d.domain == domain]
    if not docs:
        raise UserError(f"No sample targets for domain {domain!r}; choose one of {domains()}.")
    return docs


def heldout() -> list[Document]:
    return load_small(heldout_path())
