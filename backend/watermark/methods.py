"""The watermark methods, registered by name (pages and CLI list them from here), as MarkLLM does:
one package per method (ipmark/, kgw/) behind this factory."""
from __future__ import annotations

from dataclasses import dataclass

from backend.errors import UserError

BASELINE = "none"


@dataclass(frozen=True)
class Method:
    name: str
    title: str
    description: str
    identifies_users: bool
    needs_model_to_detect: bool


METHODS: dict[str, Method] = {
    "ipmark": Method("ipmark", "IPMark (sentence level, model + user)",
                     "Chooses among B sampled candidate sentences by two keyed bits (semantic LSH signature and "
                     "function-word skeleton); detection from text alone, with hierarchical identity retrieval.",
                     identifies_users=True, needs_model_to_detect=False),
    "kgw": Method("kgw", "KGW (token level, model)",
                  "Adds delta to a gamma fraction of the vocabulary (green list seeded by the previous token); "
                  "detection needs the model's tokenizer.",
                  identifies_users=False, needs_model_to_detect=True),
}
GENERATION_CHOICES = (*METHODS, BASELINE)  # what a page or the CLI may generate with


def get_method(name: str) -> Method:
    if name not in METHODS:
        raise UserError(f"Unknown watermark method {name!r}; choose one of {', '.join(METHODS)}.")
    return METHODS[name]
