"""Which model the MT view recommends: the embedded model that translates (Gemma-3-270M base).

SmolLM2-135M cannot translate even with an instruction (chrF++ ~16 EN->FR), so steering it can only show
target-language text, not translation; Gemma-3-270M translates few-shot, so the chrF++ gap that steering
should recover exists. Recommended when it is allowlisted and prepared or installed (it prepares on first load).
"""
from __future__ import annotations

from backend.errors import UserError
from backend.models import embedded
from backend.models.registry import EMBEDDED_PREFIX, list_models

TRANSLATOR = "gemma-3-270m"


def recommended_model() -> str | None:
    spec = next((s for s in list_models() if s.id == TRANSLATOR), None)
    if spec is None or not spec.is_embedded:
        return None
    name = spec.source[len(EMBEDDED_PREFIX):]
    if embedded.is_prepared(name):
        return TRANSLATOR
    try:
        embedded.check_installed(name)
    except UserError:
        return None
    return TRANSLATOR
