"""Which allowlisted model a page opens on, when not the default: page policy, so it lives in the app (no core
package names a feature). The app shell asks `recommended_model(page)` before the picker is drawn (app/main.py),
and the page itself says why.

- MT heads opens on the embedded model that translates (Gemma-3-270M base). SmolLM2-135M cannot translate even with
  an instruction (chrF++ ~16 EN->FR), so steering it can only show target-language text; Gemma-3-270M translates
  few-shot, so the chrF++ gap that steering should recover exists. Chosen when it is allowlisted and prepared or
  installed (it prepares on first load).
- Decoding opens on the project's arithmetic reasoner: on its default input, an arithmetic problem, the base model
  solves about 5% with every strategy alike, so the strategies need a reasoner to have something to differ on.
"""
from __future__ import annotations

from backend.models.allowlist import EMBEDDED_PREFIX, adapter_on_disk, list_models
from backend.models.embedded import loads_offline

TRANSLATOR = "gemma-3-270m"
# Best first: the everyday-arithmetic adapter generalises beyond the generator's templates (40% on the hand-written
# set, 86% on classic held-out problems, against the first arithmetic adapter's 28% and 67%).
ARITHMETIC_REASONER_IDS = ("smollm2-135m-arith-reasoner-everyday", "smollm2-135m-arith-reasoner")


def translator() -> str | None:
    """TRANSLATOR when it is allowlisted and can load without a download, else None."""
    spec = next((s for s in list_models() if s.id == TRANSLATOR), None)
    if spec is None or not spec.is_embedded:
        return None
    return TRANSLATOR if loads_offline(spec.source[len(EMBEDDED_PREFIX):]) else None


def arithmetic_reasoner() -> str | None:
    """The first of ARITHMETIC_REASONER_IDS allowlisted with its adapter on disk, else None."""
    specs = {s.id: s for s in list_models()}
    return next((i for i in ARITHMETIC_REASONER_IDS if i in specs and adapter_on_disk(specs[i])), None)


def recommended_model(page: str) -> str | None:
    """The model `page` (a pages/ script name) opens on, or None: the default (or the user's own pick)."""
    opening = opens_on().get(page)
    return opening() if opening else None


def opens_on() -> dict:
    """{page script: the function giving its model}, for the pages that open on another model than the default
    (looked up when asked, so a test's stand-in for either function is the one called)."""
    return {"mt_heads.py": translator, "decoding.py": arithmetic_reasoner}
