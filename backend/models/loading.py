"""Loading allowlisted causal LMs, kept resident under a memory budget.

Safetensors only, trust_remote_code=False always, fp32 on CPU (CUDA when available). A loaded model
stays resident while the models together fit DASH_MODEL_MEMORY_MB: switching back to it in the UI is
free. Past the budget the least recently used idle model is evicted (backend/models/residency.py) and
loaded again when a page needs it, with `reloaded` set on its handle. Models whose parameter count
exceeds DASH_MAX_PARAMS are refused before any weight is read.
"""
from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

from backend.config import settings
from backend.errors import UserError
import backend.models.embedded as embedded
from backend.models.architecture import ArchInfo, arch_info
from backend.models.fingerprint import fingerprint_dir
from backend.models.locks import in_use
from backend.models.allowlist import EMBEDDED_PREFIX, ModelSpec, get_spec
from backend.models.residency import Residency, model_bytes

if TYPE_CHECKING:  # annotations only: importing PreTrainedModel costs every process ~2 s of CPU (modeling_utils pulls
    # torch.distributed.tensor), though only a process that loads a model needs it, and from_pretrained imports it then
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class ModelHandle:
    """A loaded model with what every feature needs to know about it."""

    spec: ModelSpec
    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    fingerprint: str
    n_params: int
    load_seconds: float
    device: str
    info: ArchInfo
    resident_bytes: int = 0  # weights in memory (parameters and buffers)
    reloaded: bool = False  # loaded again after an eviction (pages say so)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def display_name(self) -> str:
        return self.spec.display_name

    def summary(self) -> dict:
        return {"id": self.id, "display_name": self.display_name, "fingerprint": self.fingerprint,
                "parameters": self.n_params, "load_seconds": round(self.load_seconds, 2),
                "device": self.device, "architecture": self.info.model_type,
                "layers": self.info.n_layers, "heads": self.info.n_heads, "kv_heads": self.info.n_kv_heads}


_lock = threading.Lock()  # one load at a time; also serialises the residency's bookkeeping
_resident: Residency[ModelHandle] = Residency(lambda handle: handle.model, in_use)


def pick_device() -> str:
    wanted = settings().device
    if wanted == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return wanted


def resolve_directory(spec: ModelSpec, progress: Progress | None = None) -> Path:
    """A local directory holding config.json and safetensors for the spec (downloading hub ids if online)."""
    if spec.is_embedded:
        return embedded.prepare(spec.source[len(EMBEDDED_PREFIX):], progress)
    if Path(spec.source).is_dir():
        return Path(spec.source)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec.source, allow_patterns=["*.json", "*.safetensors", "*.model", "*.txt"],
                                      local_files_only=os.environ.get("HF_HUB_OFFLINE") == "1"))
    except Exception as err:  # offline, gated, or missing: one clear message instead of a hub traceback
        raise UserError(f"Model {spec.id!r} ({spec.source}) is not available here: {type(err).__name__}. "
                        "It needs the Hugging Face hub or a local copy.") from err


def count_parameters(config) -> int:
    """Parameter count from a config alone, on the meta device (no memory, no weights read)."""
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, trust_remote_code=False)
    return sum(p.numel() for p in model.parameters())


def _config_of(spec: ModelSpec):
    try:
        return AutoConfig.from_pretrained(spec.source, trust_remote_code=False)
    except Exception as err:
        raise UserError(f"Model {spec.id!r} ({spec.source}) is not available here: {type(err).__name__}. "
                        "It needs the Hugging Face hub or a local copy.") from err


def check_budget(spec: ModelSpec, config) -> int:
    """The parameter count, or a UserError when it exceeds DASH_MAX_PARAMS."""
    n_params = count_parameters(config)
    budget = settings().max_params
    if n_params > budget:
        raise UserError(f"{spec.display_name} has {n_params / 1e6:,.0f}M parameters, over this dashboard's "
                        f"budget of {budget / 1e6:,.0f}M (set DASH_MAX_PARAMS to change it).")
    return n_params


def _merge_adapter(model: PreTrainedModel, spec: ModelSpec, base_fingerprint: str) -> tuple[PreTrainedModel, str]:
    """Merge a LoRA adapter into the weights (no per-token adapter cost); the fingerprint covers both."""
    adapter = spec.adapter_dir
    if not (adapter / "adapter_config.json").exists():
        raise UserError(f"The adapter of {spec.id!r} is missing at {adapter}; train it with "
                        "`python scripts/train_reasoning_adapter.py`.")
    from peft import PeftModel

    merged = PeftModel.from_pretrained(model, adapter).merge_and_unload().eval()
    digest = hashlib.sha256(base_fingerprint.encode())
    for path in sorted(adapter.glob("adapter_*")):
        digest.update(path.read_bytes())
    return merged, digest.hexdigest()[:16]


def load(model_id: str, progress: Progress | None = None) -> ModelHandle:
    """Load (or return the already loaded) allowlisted model `model_id`."""
    resident = _resident.get(model_id)  # without the load lock: a resident model never waits for another's load
    if resident is not None:
        return resident
    with _lock:
        resident = _resident.get(model_id)  # loaded while this call waited
        if resident is not None:
            return resident
        alive = _resident.still_alive(model_id)
        if alive is not None:  # evicted, but a computation still holds it (and it still counts): no second copy
            _resident.add(model_id, alive, alive.resident_bytes)
            return alive
        spec = get_spec(model_id)
        report = progress or (lambda fraction, message: None)
        start = time.perf_counter()
        if not spec.is_embedded:  # check the budget from the config before any weight is fetched
            check_budget(spec, _config_of(spec))
        directory = resolve_directory(spec, progress)
        if not any(directory.glob("*.safetensors")):  # pickle checkpoints can run code when loaded: never
            raise UserError(f"Model {spec.id!r} has no .safetensors weights in its folder; pickle checkpoints "
                            "(.bin, .pt) are not loaded. Convert it to safetensors first.")
        n_params = check_budget(spec, AutoConfig.from_pretrained(directory, trust_remote_code=False))
        device = pick_device()
        reloaded = _resident.was_evicted(model_id)
        _resident.make_room(n_params * (4 if device == "cpu" else 2), settings().model_memory_bytes,
                            spec.display_name)
        report(0.9, f"{'Reloading' if reloaded else 'Loading'} {spec.display_name}"
                    + (" (evicted earlier to keep the models within DASH_MODEL_MEMORY_MB)" if reloaded else ""))
        model = AutoModelForCausalLM.from_pretrained(
            directory, dtype=torch.float32 if device == "cpu" else torch.bfloat16,
            use_safetensors=True, trust_remote_code=False).to(device).eval()
        # Generation defaults (top_k, repetition penalty, ...) must never leak into our samplers.
        model.generation_config.do_sample = False
        fingerprint = fingerprint_dir(directory)
        if spec.adapter_dir is not None:
            model, fingerprint = _merge_adapter(model, spec, fingerprint)
        tokenizer = AutoTokenizer.from_pretrained(directory, trust_remote_code=False)
        size = model_bytes(model)
        handle = ModelHandle(spec=spec, model=model, tokenizer=tokenizer, fingerprint=fingerprint, n_params=n_params,
                             load_seconds=time.perf_counter() - start, device=device, info=arch_info(model),
                             resident_bytes=size, reloaded=reloaded)
        _resident.add(model_id, handle, size)
        report(1.0, f"{spec.display_name} {'reloaded after eviction' if reloaded else 'loaded'}")
        return handle


def loaded_ids() -> list[str]:
    """Resident models, least recently used first."""
    return _resident.ids()


def memory_use() -> tuple[int, int]:
    """(bytes of resident weights, the budget in bytes)."""
    return _resident.used_bytes(), settings().model_memory_bytes
