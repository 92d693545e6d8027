"""The model allowlist: data/models/registry.json plus DASH_EXTRA_MODELS.

A deployed dashboard may only load sources listed here, so a user cannot point it at an
arbitrary path or hub repository from the UI.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from backend.config import settings
from backend.errors import UserError
from backend.unicode_text import visible

EMBEDDED_PREFIX = "embedded:"


@dataclass(frozen=True)
class ModelSpec:
    id: str
    display_name: str
    source: str  # "embedded:<name>", a hub id "org/name", or a local directory
    notes: str = ""
    adapter: str = ""  # optional LoRA adapter directory (relative to the data dir), merged at load time
    max_new_tokens: int = 0  # new tokens its answers need, when more than the pages' default (0: that default)

    def __post_init__(self):
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int) \
                or self.max_new_tokens < 0:
            raise UserError(f"Registry entry {self.id!r}: max_new_tokens must be a whole number of tokens "
                            f"(0 for the pages' default), not {self.max_new_tokens!r}.")

    @property
    def adapter_dir(self) -> Path | None:
        if not self.adapter:
            return None
        path = Path(self.adapter)
        return path if path.is_absolute() else settings().data_dir / path

    @property
    def is_embedded(self) -> bool:
        return self.source.startswith(EMBEDDED_PREFIX)

    @property
    def is_local_dir(self) -> bool:
        return not self.is_embedded and Path(self.source).is_dir()

    def to_dict(self) -> dict:
        return {"id": self.id, "display_name": self.display_name, "source": self.source, "notes": self.notes,
                "adapter": self.adapter, "max_new_tokens": self.max_new_tokens}


def _parse_extra(extra: str) -> list[ModelSpec]:
    specs = []
    for item in filter(None, (part.strip() for part in extra.split(";"))):
        if "=" not in item:
            raise UserError(f"DASH_EXTRA_MODELS entry {item!r} must look like 'id=source'.")
        model_id, source = (s.strip() for s in item.split("=", 1))
        # shown, never applied: a U+202E in an id would display "evil\u202eledom" as "evilmodel"
        specs.append(ModelSpec(id=model_id, display_name=visible(model_id), source=source,
                               notes="From DASH_EXTRA_MODELS."))
    return specs


def list_models() -> list[ModelSpec]:
    """All allowlisted models, registry file first, then DASH_EXTRA_MODELS (which may override ids)."""
    cfg = settings()
    entries = json.loads(cfg.registry_file.read_text())["models"] if cfg.registry_file.exists() else []
    by_id = {e["id"]: ModelSpec(**e) for e in entries}
    for spec in _parse_extra(cfg.extra_models):
        by_id[spec.id] = spec
    return list(by_id.values())


def get_spec(model_id: str) -> ModelSpec:
    for spec in list_models():
        if spec.id == model_id:
            return spec
    known = ", ".join(s.id for s in list_models())
    raise UserError(f"Unknown model {model_id!r}. Allowlisted models: {known}.")


def default_model_id() -> str:
    return settings().default_model


def adapter_on_disk(spec: ModelSpec) -> bool:
    """Whether the spec's LoRA adapter (if it names one) is there to merge."""
    return spec.adapter_dir is not None and (spec.adapter_dir / "adapter_config.json").exists()
