"""Every verdict a text can get at once: one row per registered watermark method that can judge it.

A method can judge a text when what its detection needs is at hand: the language model's tokenizer
(`needs_model_to_detect`), a model identity whose key to test (`needs_identity_to_detect`: the given one, else the
first registered), registered identities for a method that searches the registry (its detection answers "no
identities registered" otherwise), and whatever its config must be given (its detection raises a UserError
naming the field). The others are listed as skipped with the reason, so a method registered later joins the
table by itself. Each verdict says what it means: "no evidence of this watermark" is not "written by a human".
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from backend.errors import UserError
from backend.progress import Progress, silent
import backend.watermark.identities as identities
from backend.watermark.demo import tagged
from backend.watermark.methods import (CLEAN, EMPTY_REGISTRY, METHODS, TOO_SHORT, WATERMARKED, DetectRequest,
                                       Detection, detect)
from backend.watermark.uploads import MAX_CHARS

MEANINGS = {
    WATERMARKED: "evidence of this watermark: text written with its key (at the method's significance level)",
    CLEAN: "no evidence of this watermark - not proof of human writing (other methods, other keys or heavy "
           "editing leave no trace here)",
    TOO_SHORT: "too little scorable text to decide either way",
}


@dataclass(frozen=True)
class Verdict:
    """One method's verdict on a text, in the table's words. `p_value` is the one the verdict is taken on
    (corrected over `keys_compared` keys when the method searched several)."""

    method: str
    label: str
    verdict: str
    meaning: str
    score: float
    z: float | None
    p_value: float | None
    keys_compared: int
    corrected_over: str  # what `p_value` was corrected over, in words ("" when one key was tested)
    scored: int | None  # tokens (or sentences, see `scored_unit`) the score is computed on
    scored_unit: str
    identity: str  # who the text is attributed to ("no model" when not flagged)
    evidence: str
    removed_characters: int | None  # invisible characters removed before detection, when the method reports it
    seconds: float
    detection: Detection | None = None  # the full detection, for the page's highlight (not exported)

    def to_json(self) -> dict:
        return {"method": self.method, "verdict": self.verdict, "meaning": self.meaning, "score": self.score,
                "z": self.z, "p_value": self.p_value, "keys_compared": self.keys_compared,
                "corrected_over": self.corrected_over,
                "tokens_scored": self.scored if self.scored_unit == "tokens" else None,
                "scored": self.scored, "scored_unit": self.scored_unit, "identity": self.identity,
                "evidence": self.evidence, "removed_characters": self.removed_characters,
                "seconds": round(self.seconds, 4)}


@dataclass(frozen=True)
class Skipped:
    method: str
    label: str
    reason: str


@dataclass(frozen=True)
class VerdictTable:
    rows: tuple[Verdict, ...]
    skipped: tuple[Skipped, ...]

    def to_json(self) -> list[dict]:
        return [row.to_json() for row in self.rows]


def _scored(found: Detection) -> tuple[int | None, str]:
    """How much text the score stands on: tokens for token-level methods, usable sentences for sentence-level."""
    for holder in (found, found.report):
        for name in ("tokens_scored", "n_tokens"):
            value = getattr(holder, name, None)
            if isinstance(value, int):
                return value, "tokens"
    usable = getattr(found.report, "n_usable", None)
    return (usable, "sentences") if isinstance(usable, int) else (None, "")


def _removed(found: Detection) -> int | None:
    for holder in (found, found.report):
        value = getattr(holder, "removed_characters", None)
        if isinstance(value, int):
            return value
    return None


def verdict_of(found: Detection, label: str, seconds: float) -> Verdict:
    scored, unit = _scored(found)
    who = found.identified()
    if found.model_address:
        who = tagged(who, found.model_address)
    elif found.flagged:  # a method keyed by its settings (hf-kgw, synthid): no identity to name
        who = "the method's keys (no identity)"
    return Verdict(method=found.method, label=label, verdict=found.verdict, meaning=MEANINGS.get(found.verdict, ""),
                   score=float(found.score), z=found.z, p_value=found.p_family, keys_compared=found.compared,
                   corrected_over=getattr(found, "corrected_over", "") or "",
                   scored=scored, scored_unit=unit, identity=who, evidence=found.evidence,
                   removed_characters=_removed(found), seconds=seconds, detection=found)


def verdict_table(text: str, handle: Any = None, *, prompt: str | None = None, model_address: int = 0,
                  configs: Mapping[str, Any] | None = None, progress: Progress = silent,
                  key_holder: bool = True) -> VerdictTable:
    """The verdict of every registered method that can judge `text` (see the module docstring).
    handle: the language model whose tokenizer token-level methods use (None: they are skipped);
    model_address: the model identity whose key identity-keyed methods test (0: the first registered);
    configs: method name -> its config (absent: the method's defaults);
    key_holder: False for an asker without the secret keys (backend.watermark.disclosure)."""
    if len(text or "") > MAX_CHARS:  # refused once, not once per method
        raise UserError(f"The text has {len(text):,} characters; the limit is {MAX_CHARS:,}.")
    configs = dict(configs or {})
    methods = [m for m in METHODS if not m.is_baseline]
    keyed = model_address
    if not keyed and any(m.needs_identity_to_detect for m in methods):
        registered = identities.list_models()
        keyed = registered[0].address if registered else 0
    rows, skipped = [], []
    for i, method in enumerate(methods):
        progress(i / len(methods), f"{method.label}")
        if method.needs_model_to_detect and handle is None:
            skipped.append(Skipped(method=method.name, label=method.label,
                                   reason="needs the language model's tokenizer"))
            continue
        if method.needs_identity_to_detect and not keyed:
            skipped.append(Skipped(method=method.name, label=method.label,
                                   reason="tests a model identity's key: register one (Registry tab) to add it"))
            continue
        request = DetectRequest(method.name, prompt=prompt, model_address=keyed if method.needs_identity_to_detect
                                else 0, config=configs.get(method.name), handle=handle, key_holder=key_holder)
        start = time.perf_counter()
        try:
            found = detect(text, request)
        except UserError as problem:  # e.g. keys the method needs were not given: the other rows still stand
            skipped.append(Skipped(method=method.name, label=method.label, reason=str(problem)))
            continue
        if found.verdict == EMPTY_REGISTRY:
            skipped.append(Skipped(method=method.name, label=method.label,
                                   reason="identifies registered identities: joins when identities exist (Registry tab)"))
            continue
        rows.append(verdict_of(found, method.label, time.perf_counter() - start))
    progress(1.0, f"{len(rows)} verdicts")
    return VerdictTable(rows=tuple(rows), skipped=tuple(skipped))
