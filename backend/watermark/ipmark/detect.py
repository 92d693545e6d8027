"""IPMark detection from text alone (no language model): segment, sign once, retrieve the identity.

Verdicts: "watermarked" (see backend.watermark.retrieval: the verdict is the model level's, its p corrected over
the registered models only, `p_decision`; the user is named when its level, corrected over that model's users
only, also passes alpha),
"not watermarked", "too short to decide" (fewer than `min_sentences` usable sentences; the scores are
still reported), "no identities registered".
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import backend.watermark.identities as identities
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.keys import model_key, user_key
from backend.watermark.methods import CLEAN, EMPTY_REGISTRY, TOO_SHORT, WATERMARKED, strip_prompt
from backend.watermark.retrieval import Match, Retrieval, flat, hierarchical
from backend.watermark.scoring import SentenceRow, sentence_rows
from backend.watermark.signatures import Signature, sign_text
from backend.watermark.stats import LevelScore

__all__ = ["CLEAN", "EMPTY_REGISTRY", "TOO_SHORT", "WATERMARKED", "IPMarkReport", "detect", "detect_signed",
           "strip_prompt"]


@dataclass(frozen=True)
class IPMarkReport:
    """A detection result. Levels are those of the attributed (or best-guess) identity."""

    verdict: str
    model_address: int  # 0 when none
    model_name: str
    user_address: int  # 0 when the user is not attributed
    user_label: str
    guess_user_address: int  # best-scoring user even when not significant (0 if none)
    model_level: LevelScore | None
    user_level: LevelScore | None
    total: LevelScore | None
    n_sentences: int
    n_usable: int
    sentences: tuple[SentenceRow, ...]
    top_models: tuple[tuple[int, str, float, float], ...]  # (address, name, z, log10 p), best first
    retrieval: str
    keys_evaluated: int
    p_decision: float  # the family-wise p the verdict is taken on: the model level's (1.0 without a candidate)
    signature_seconds: float
    retrieval_seconds: float
    signatures: tuple[Signature, ...] = ()  # each sentence's, as detection read it: its drill-down shows it as is

    @property
    def detection_score(self) -> float:
        """-log10 p of the best identity's total evidence (the ROC statistic; uncorrected, it decides nothing)."""
        return 0.0 if self.total is None else -self.total.log10_p

    def summary(self) -> dict:
        lv = lambda s: None if s is None else {"z": round(s.z, 3), "p_value": s.p_value, "bits": s.n_bits,  # noqa: E731
                                               "sentences": s.n_sentences, "score": s.score,
                                               "best_of_keys": s.compared, "p_corrected": s.p_family,
                                               "correction": s.correction, "corrected_over": s.corrected_over}
        return {"verdict": self.verdict, "model": self.model_address or None, "model_name": self.model_name,
                "user": f"{self.model_address}.{self.user_address}" if self.user_address else None,
                "user_label": self.user_label, "sentences": self.n_sentences, "usable_sentences": self.n_usable,
                "model_level": lv(self.model_level), "user_level": lv(self.user_level), "total": lv(self.total),
                "p_corrected": self.p_decision, "retrieval": self.retrieval, "keys_evaluated": self.keys_evaluated,
                "seconds": round(self.signature_seconds + self.retrieval_seconds, 3)}

    def to_json(self) -> dict:
        return {**self.summary(), "sentences": [dict(r.__dict__) for r in self.sentences]}


def detect_signed(sigs: list[Signature], cfg: IPMarkConfig, method: str = "hierarchical",
                  users: dict[int, list[int]] | None = None, names: dict[int, str] | None = None,
                  signature_seconds: float = 0.0) -> IPMarkReport:
    """Detection on already signed sentences (lets benchmarks time retrieval alone)."""
    if names is None:
        names = {m.address: m.name for m in identities.list_models()}
    if users is None:
        users = {m: [] for m in names} | identities.all_users_by_model()
    n_usable = sum(s.usable for s in sigs)
    if not users:
        return _report(EMPTY_REGISTRY, None, None, sigs, n_usable, names, cfg, signature_seconds)
    found = hierarchical(sigs, users, cfg.w_sem, cfg.w_syn, cfg.alpha) if method == "hierarchical" \
        else flat(sigs, users, cfg.w_sem, cfg.w_syn, cfg.alpha)
    best = found.best
    if n_usable < cfg.min_sentences:
        verdict = TOO_SHORT
    else:
        verdict = WATERMARKED if best is not None and best.model_significant else CLEAN
    return _report(verdict, best, found, sigs, n_usable, names, cfg, signature_seconds)


def _report(verdict: str, best: Match | None, found: Retrieval | None, sigs, n_usable, names, cfg,
            signature_seconds) -> IPMarkReport:
    if best is not None:
        mk = model_key(best.model_address)
        uk = user_key(best.model_address, best.user_address) if best.user_address else None
        rows = sentence_rows(sigs, mk, uk, cfg.w_sem, cfg.w_syn)
    else:
        rows = [SentenceRow(index=i, text=s.text, start=s.start, end=s.end, usable=s.usable, level="", sem_bit=-1,
                            syn_bit=-1, contribution=0.0, repeated=False) for i, s in enumerate(sigs)]
    attributed = verdict == WATERMARKED
    show_user = attributed and best is not None and best.user_significant
    top = tuple((m, names.get(m, "?"), round(z, 4), round(lp, 4)) for m, z, lp in (found.models[:10] if found else ()))
    return IPMarkReport(
        verdict=verdict,
        model_address=best.model_address if attributed else 0,
        model_name=names.get(best.model_address, "") if attributed else "",
        user_address=best.user_address if show_user else 0,
        user_label=_label(best) if show_user else "",
        guess_user_address=best.user_address if best else 0,
        model_level=best.model if best else None, user_level=best.user if best else None,
        total=best.total if best else None, n_sentences=len(sigs), n_usable=n_usable, sentences=tuple(rows),
        top_models=top, retrieval=found.method if found else "", keys_evaluated=found.keys_evaluated if found else 0,
        p_decision=best.p_decision if best else 1.0,
        signature_seconds=signature_seconds, retrieval_seconds=found.seconds if found else 0.0,
        signatures=tuple(sigs))


def _label(best: Match) -> str:
    try:
        return identities.get_user(best.model_address, best.user_address).label
    except Exception:  # the registry changed under us: the address is still right
        return ""


def detect(text: str, cfg: IPMarkConfig = IPMarkConfig(), prompt: str | None = None,
           method: str = "hierarchical") -> IPMarkReport:
    """Detect and attribute an IPMark watermark in `text` (the prompt, when given, is removed first)."""
    start = time.perf_counter()
    sigs = sign_text(strip_prompt(text or "", prompt), cfg.n_bits)
    return detect_signed(sigs, cfg, method, signature_seconds=time.perf_counter() - start)
