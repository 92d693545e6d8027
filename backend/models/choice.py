"""Which allowlisted model a page opens on, when not the default: the app shell asks through
`backend.features.opening_model`, and the page itself says why.

- MT heads opens on the embedded model that translates (Gemma-3-270M base). SmolLM2-135M cannot translate even with
  an instruction (chrF++ ~16 EN->FR), so steering it can only show target-language text; Gemma-3-270M translates
  few-shot, so the chrF++ gap that steering should recover exists. Chosen when it is allowlisted and prepared or
  installed (it prepares on first load).
- Decoding opens on the project's arithmetic reasoner: on its default input, an arithmetic problem, the base model
  solves about 5% with every strategy alike, so the strategies need a reasoner to have something to differ on.
"""
from __future__ import annotations

import backend.models.embedded as embedded
from backend.errors import UserError
from backend.models.allowlist import EMBEDDED_PREFIX, ModelSpec, list_models

TRANSLATOR = "gemma-3-270m"
# Best first: adapter attempt 6 generalises beyond the generator's templates (40% on the hand-written set, 86% on
# classic held-out problems, against attempt 3's 28% and 67%).
ARITHMETIC_REASONER_IDS = ("smollm2-135m-arith-reasoner-everyday", "smollm2-135m-arith-reasoner")


def translator() -> str | None:
    """TRANSLATOR when it is allowlisted and can load without a download, else None."""
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


def arithmetic_reasoner() -> str | None:
    """The first of ARITHMETIC_REASONER_IDS allowlisted with its adapter on disk, else None."""
    specs = {s.id: s for s in list_models()}
    return next((i for i in ARITHMETIC_REASONER_IDS if i in specs and adapter_on_disk(specs[i])), None)


def adapter_on_disk(spec: ModelSpec) -> bool:
    return spec.adapter_dir is not None and (spec.adapter_dir / "adapter_config.json").exists()
