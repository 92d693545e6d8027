"""The watermark methods: one Registry, as MarkLLM's factory. Each method's package (ipmark/, kgw/)
registers a `WatermarkMethod` in its `method` module; the unwatermarked baseline is registered here.

A method says how it embeds (`run(handle, request) -> SamplingHook`: how the shared sentence loop
samples for it), how it detects (`detect(text, DetectRequest) -> Detection`, one summary for every
method), its config type (`config`; the requests hold it in a field named after the method) and what
it identifies (`identifies_users`, `needs_model_to_detect`, `needs_identity_to_detect`). Generation,
the CLI, the evaluation and the page read these instead of branching on method names.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from backend.errors import UserError
from backend.params import Config, param
from backend.unicode_text import Normalized, normalize, visible
from backend.variants import Registry, Variant
from backend.watermark.disclosure import keyed, spend_query, withhold
from backend.watermark.keys import is_demo
from backend.watermark.uploads import MAX_CHARS

BASELINE = "none"  # the unwatermarked baseline: generates like the others, never detects
WATERMARKED, CLEAN, TOO_SHORT, EMPTY_REGISTRY = ("watermarked", "not watermarked", "too short to decide",
                                                 "no identities registered")
SEARCHES = ("hierarchical", "flat")
MARKS = ("strong", "weak", "miss", "unscored", "neutral")  # how a highlighted piece scored (see Detection.pieces)
EVIDENCE_MARKS = ("strong", "weak", "miss")  # shown as evidence only on a text the verdict flags


@dataclass(frozen=True)
class SamplingHook:
    """How the shared sentence loop samples for a method: candidates per sentence, the chooser (None: the first
    candidate) and transformers-signature logits processors `(input_ids, scores) -> scores`: `logits_processors`
    before the temperature, `watermark_processors` after it (where `generate` applies transformers' watermarks)."""

    n_candidates: int = 1
    choose: Callable | None = None
    logits_processors: tuple[Callable, ...] = ()
    watermark_processors: tuple[Callable, ...] = ()


@dataclass(frozen=True)
class Detection:
    """What every method's detection reports; `report` holds the method's own details."""

    method: str
    verdict: str  # WATERMARKED | CLEAN | TOO_SHORT | EMPTY_REGISTRY
    score: float  # the ROC statistic under the tested identity (or the best one); higher = stronger evidence
    z: float | None  # raw score of the best identity (of the tested key when only one is tested)
    p_value: float | None  # its one-key p-value, uncorrected: with a registry search, not a p-value by itself
    model_address: int  # the identified model (0: none)
    model_name: str
    user_address: int  # the identified user (0: none, or the method does not identify users)
    user_label: str
    guess_model: int  # best-scoring identity even when not significant (0: none)
    guess_user: int
    evidence: str  # one line: what was scored ("5 usable of 6 sentences", "30/40 green tokens")
    levels: tuple = ()  # LevelScore per level of evidence, strongest claim last
    pieces: tuple[tuple[str, str, str], ...] = ()  # (text, mark in MARKS or "" for plain, tooltip), in order
    units: tuple = ()  # per-unit rows for a table (IPMark: its sentences with levels and bits)
    keys_evaluated: int = 0  # identity keys scored by a registry search (0: no search)
    seconds: float = 0.0
    report: Any = None
    p_corrected: float | None = None  # family-wise p over the keys compared, what the verdict is taken on
    compared: int = 1  # the reported identity is the best of this many identities' keys (1: one key tested)
    corrected_over: str = ""  # what p_corrected was corrected over, in words ("Šidák over 1 model"; "": one key)
    removed_characters: int = 0  # invisible (format) characters removed before detection (see `detect`)
    folded_characters: int = 0  # look-alike letters folded to Latin before detection

    @property
    def flagged(self) -> bool:
        return self.verdict == WATERMARKED

    def identified(self) -> str:
        """Who the text is attributed to, in words."""
        if not self.model_address:
            return "no model"
        who = f"model {self.model_address}" + (f" ({visible(self.model_name)})" if self.model_name else "")
        if self.user_address:
            who += f", user {self.model_address}.{self.user_address}" + (f" ({visible(self.user_label)})"
                                                                          if self.user_label else "")
        return who

    @property
    def demo(self) -> bool:
        """The identity tested or found is the demo's: its key is public, anyone can write its marks."""
        return is_demo(self.model_address or self.guess_model)

    @property
    def normalisation(self) -> str:
        """What normalisation changed, in words ("412 invisible characters removed"); "" when nothing."""
        return Normalized(text="", removed=self.removed_characters, folded=self.folded_characters).describe()

    @property
    def p_family(self) -> float | None:
        """The p-value to show and decide with: corrected for the keys compared (the raw one when K = 1)."""
        return self.p_value if self.p_corrected is None else self.p_corrected

    def to_json(self) -> dict:
        """The common summary, then the method's own summary and per-unit details (`watermark detect --json`)."""
        common = {"method": self.method, "verdict": self.verdict, "demo": self.demo, "z": self.z, "p_value": self.p_value,
                  "p_corrected": self.p_family, "best_of_keys": self.compared, "corrected_over": self.corrected_over,
                  "removed_characters": self.removed_characters, "folded_characters": self.folded_characters}
        return {**common, **(self.report.to_json() if self.report is not None else {"evidence": self.evidence})}


def watermark_names() -> tuple[str, ...]:
    """The methods that embed a watermark (and can detect one): every registered method but the baseline."""
    return tuple(m.name for m in METHODS if not m.is_baseline)


@dataclass(frozen=True)
class DetectRequest(Config):
    """What detection needs beside the text. `model_address`/`user_address` name the identity whose keys
    are tested (methods that search the registry still search it; the score is then this identity's)."""

    method: str = param("ipmark", "watermark method to test for", choices=watermark_names)
    search: str = param("hierarchical", "identity search: hierarchical (model, then its users) or a flat scan "
                        "of every key", choices=SEARCHES)
    prompt: str | None = None  # removed from the text first
    model_address: int = 0
    user_address: int = 0
    config: Any = None  # the method's config (None: its defaults)
    handle: Any = None  # the language model, for methods that need it to detect
    # False: the asker does not hold the secret keys (a remote page user): a keyed method's answer is budgeted and
    # withheld to its verdict (backend.watermark.disclosure)
    key_holder: bool = True


@dataclass(frozen=True)
class WatermarkMethod(Variant):
    """run(handle, request) -> SamplingHook; detect(text, DetectRequest) -> Detection (None: the baseline)."""

    detect: Callable[[str, DetectRequest], Detection] | None = None
    identifies_users: bool = False  # detection names the user as well as the model
    needs_model_to_detect: bool = False  # detection needs the language model (its tokenizer)
    needs_identity_to_detect: bool = False  # detection tests one given model's key instead of searching
    # How many sentences its generation writes unless told otherwise: enough for its own detector to flag the text
    # at the first try on the embedded model (measured by bench/watermark_first_try.py, docs/RESULTS.md).
    sentences_to_flag: int = 6

    @property
    def is_baseline(self) -> bool:
        return self.detect is None

    @property
    def identity_free(self) -> bool:
        """Judges any text with its settings alone, no registered identity needed (hf-kgw, synthid)."""
        return not (self.is_baseline or self.identifies_users or self.needs_identity_to_detect)

    @property
    def ranks_candidates(self) -> bool:
        """Chooses among several sampled candidates per sentence (its config declares how many: IPMark's B)."""
        return self.config is not None and "n_candidates" in self.config.__dataclass_fields__

    @property
    def field(self) -> str:
        """The name of the field holding this method's config in requests ("hf-kgw" -> "hf_kgw")."""
        return self.name.replace("-", "_")

    def config_in(self, holder: Any) -> Any:
        """This method's config inside a request or evaluation config (the field named after the method)."""
        return getattr(holder, self.field) if self.config is not None else None


METHODS: Registry[WatermarkMethod] = Registry("watermark-methods", "watermark method")


def detect(text: str, request: DetectRequest) -> Detection:
    """Detect with the request's method (the prompt, when given, is removed first by the method). Every method
    reads the one canonical form made here (backend.unicode_text: whitespace and separators one space, invisible
    and control characters removed, NFKC, Latin look-alikes folded), so a zero-width space between every
    character, a Hangul filler for every space or a Cyrillic "а" cannot hide a mark; the Detection counts what was
    removed and folded."""
    method = METHODS.get(request.method)
    if len(text or "") > MAX_CHARS:  # every entry point (paste, --text, stdin, upload, scan) meets this limit
        raise UserError(f"The text has {len(text):,} characters; the limit is {MAX_CHARS:,}.")
    clean = normalize(text or "")
    if request.prompt:
        request = replace(request, prompt=normalize(request.prompt).text)
    guarded = not request.key_holder and keyed(method) and not is_demo(request.model_address)
    if guarded:  # counted before the work: a refused query computes nothing
        spend_query(method.name, request.model_address)
    found = method.detect(clean.text, request)
    found = replace(found, removed_characters=clean.removed, folded_characters=clean.folded)
    return withhold(found) if guarded else found


def evidence_pieces(pieces, flagged: bool) -> tuple:
    """The pieces as the page may colour them: on a text the verdict does not flag, no piece is shown as
    evidence (its mark becomes "neutral"; the tooltip keeps its bits, marked not significant)."""
    if flagged:
        return tuple(pieces)
    return tuple((text, "neutral", f"not significant · {tip}" if tip else "not significant")
                 if mark in EVIDENCE_MARKS else (text, mark, tip) for text, mark, tip in pieces)


def strip_prompt(text: str, prompt: str | None) -> str:
    """Remove the prompt from the text when it is quoted at the start (or once anywhere)."""
    if not prompt or not prompt.strip():
        return text
    body, p = text.lstrip(), prompt.strip()
    if body.startswith(p):
        return body[len(p):]
    index = text.find(p)
    return text if index < 0 else text[:index] + text[index + len(p):]


METHODS.register(WatermarkMethod(name=BASELINE, label="No watermark",
                                 help="Plain sampling through the same sentence loop (the unwatermarked baseline).",
                                 run=lambda handle, request: SamplingHook(1)))
