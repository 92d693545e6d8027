"""Quality, robustness and attribution evaluation of IPMark and KGW on one model (cached in the store).

Per prompt: one unwatermarked, one IPMark and one KGW generation (each cached on its own, so an
interrupted evaluation resumes). Negatives: the unwatermarked generations plus the shipped
human-written texts. Each attack is applied to the watermarked texts; ROC-AUC and TPR at 1/5/10%
FPR are measured against the clean negatives. Detection is "is this text watermarked with the keys of
identity k": IPMark's statistic is -log10 p of the total evidence (both levels) under the generating
user's keys (negative k is tested against the k-th identity in turn); KGW's is its z-score under the
model's key. `tpr_decision` / `fpr_decision` use each method's own verdict instead: IPMark's full
registry search at family-wise alpha, KGW's z >= 4.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from backend.models.decoding import context_limit
from backend.models.generate import encode_prompt
from backend.models.generate import generate as plain_generate
from backend.models.loading import ModelHandle
from backend.progress import Progress, scaled, silent
from backend.store import Computed, ModelRef, cached, latest
from backend.watermark import registry
from backend.watermark.attacks import AttackContext, apply_attack
from backend.watermark.corpus import human_texts, prompts
from backend.watermark.generation import Generation, generate, make_request
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.ipmark.detect import detect as ipmark_detect
from backend.watermark.ipmark.detect import detect_signed
from backend.watermark.keys import secret_tag
from backend.watermark.kgw.config import KGWConfig
from backend.watermark.kgw.detect import detect as kgw_detect
from backend.watermark.metrics import roc_auc, roc_curve, tpr_at_fpr
from backend.watermark.quality import perplexity
from backend.watermark.sampling import SamplingConfig
from backend.watermark.retrieval import flat
from backend.watermark.segment import split_units
from backend.watermark.signatures import sign_text

CODE_VERSION = "3"
DEFAULT_ATTACKS = (("synonym_substitution", 0.1), ("synonym_substitution", 0.3), ("word_deletion", 0.1),
                   ("copy_paste", 0.5), ("sentence_shuffle", 1.0), ("sentence_deletion", 0.3),
                   ("lm_paraphrase", 1.0))
FPRS = (0.01, 0.05, 0.10)


@dataclass(frozen=True)
class EvalConfig:
    n_prompts: int = 10
    n_users: int = 24
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    ipmark: IPMarkConfig = field(default_factory=IPMarkConfig)
    kgw: KGWConfig = field(default_factory=KGWConfig)
    attacks: tuple[tuple[str, float], ...] = DEFAULT_ATTACKS
    attack_seed: int = 0
    secret_tag: str = ""


@dataclass(frozen=True)
class QualityRow:
    method: str  # "none" | "ipmark" | "kgw"
    ppl_mean: float
    ppl_median: float
    sentences_mean: float
    words_mean: float
    n: int


@dataclass(frozen=True)
class DetectionRow:
    method: str
    condition: str  # "clean" or "<attack> <rate>"
    auc: float
    tpr_1: float
    tpr_5: float
    tpr_10: float
    tpr_decision: float  # share flagged by the method's own decision rule
    fpr_decision: float  # share of negatives flagged by the same rule
    n_pos: int
    n_neg: int


@dataclass(frozen=True)
class AttributionRow:
    sentences: int  # the first k sentences of each IPMark text
    n_texts: int
    model_accuracy: float  # best-guess model correct
    user_accuracy: float  # best-guess model and user correct
    user_decided: float  # share where the user passed its significance test (and was right)


@dataclass(frozen=True)
class RocCurve:
    method: str
    condition: str
    fpr: np.ndarray  # [points]
    tpr: np.ndarray  # [points]


@dataclass(frozen=True)
class EvalResult:
    model_name: str
    model_address: int
    n_users: int
    quality: tuple[QualityRow, ...]
    detection: tuple[DetectionRow, ...]
    attribution: tuple[AttributionRow, ...]
    curves: tuple[RocCurve, ...]
    examples: tuple[Generation, ...]  # the first prompt's three generations (side by side)


def eval_identities(handle: ModelHandle, n_users: int) -> tuple[int, list[int]]:
    """The evaluation's model identity (plus a decoy model with as many users, so retrieval has a choice)."""
    model = registry.get_or_add_model(f"eval:{handle.id}")
    decoy = registry.get_or_add_model(f"eval-decoy:{handle.id}")
    users = registry.ensure_users(model.address, n_users, "eval")
    registry.ensure_users(decoy.address, n_users, "decoy")
    return model.address, [u.user_address for u in users]


@dataclass(frozen=True)
class ParaphraseRequest:
    text: str
    instruction: str = "Rewrite the following text in your own words:"


def _paraphraser(handle: ModelHandle):
    """Greedy whole-text paraphrase by the model (cached per text: it is the slowest attack)."""
    limit = context_limit(handle.model) or 4096

    def compute(request: ParaphraseRequest) -> str:
        prompt = f"{request.instruction}\n\n{request.text}"
        n_text = len(handle.tokenizer(request.text, add_special_tokens=False)["input_ids"])
        room = limit - encode_prompt(handle, prompt).shape[1] - 1
        budget = min(int(n_text * 1.5) + 16, 400, room)
        if budget <= 0:
            return request.text
        return plain_generate(handle, prompt, max_new_tokens=budget, temperature=0.0).text

    def paraphrase(text: str) -> str:
        request = ParaphraseRequest(text)
        return cached("watermark", "paraphrase", ModelRef.of(handle), request, lambda: compute(request)).value
    return paraphrase


def _row(method, condition, pos, neg, flagged_pos, flagged_neg) -> DetectionRow:
    return DetectionRow(method, condition, roc_auc(pos, neg), *(tpr_at_fpr(pos, neg, f) for f in FPRS),
                        float(np.mean(flagged_pos)) if flagged_pos else float("nan"),
                        float(np.mean(flagged_neg)) if flagged_neg else float("nan"), len(pos), len(neg))


def run_evaluation(handle: ModelHandle, cfg: EvalConfig, progress: Progress = silent) -> EvalResult:
    model_address, users = eval_identities(handle, cfg.n_users)
    chosen_prompts = prompts()[:cfg.n_prompts]
    gens: dict[str, list[Generation]] = {"none": [], "ipmark": [], "kgw": []}
    for i, prompt in enumerate(chosen_prompts):
        user = users[i % len(users)]
        for j, method in enumerate(gens):
            step = (i * 3 + j) / (3 * len(chosen_prompts))
            progress(0.7 * step, f"Generating {method} text {i + 1}/{len(chosen_prompts)}")
            sampling = SamplingConfig(**{**cfg.sampling.__dict__, "seed": cfg.sampling.seed + i})
            req = make_request(prompt, method, model_address, user, sampling, cfg.ipmark, cfg.kgw)
            gens[method].append(generate(handle, req).value)
    progress(0.7, "Perplexity")
    quality = []
    for method, items in gens.items():
        ppl = [perplexity(handle, g.prompt, g.text, cfg.sampling.chat) for g in items]
        ppl = [p for p in ppl if np.isfinite(p)]
        quality.append(QualityRow(method, float(np.mean(ppl)) if ppl else float("nan"),
                                  float(np.median(ppl)) if ppl else float("nan"),
                                  float(np.mean([len(split_units(g.text)) for g in items])),
                                  float(np.mean([len(g.text.split()) for g in items])), len(items)))
    negatives = [g.text for g in gens["none"]] + list(human_texts())

    def ip_score(text, k):
        """-log10 p under the identity being tested (user k's keys); flag = the registry search's verdict."""
        sigs = sign_text(text, cfg.ipmark.n_bits)
        known = flat(sigs, {model_address: [users[k % len(users)]]}, cfg.ipmark.w_sem, cfg.ipmark.w_syn,
                     cfg.ipmark.alpha).best
        found = detect_signed(sigs, cfg.ipmark)
        return -known.total.log10_p, found.verdict == "watermarked"

    def kgw_score(text, k):
        r = kgw_detect(handle, text, model_address, cfg.kgw)
        return r.detection_score, r.verdict == "watermarked"

    scorers = {"ipmark": ip_score, "kgw": kgw_score}
    neg_scores = {m: [scorers[m](t, k) for k, t in enumerate(negatives)] for m in scorers}
    conditions = [("clean", None, 0.0)] + [(f"{a} {r:g}", a, r) for a, r in cfg.attacks]
    rows, curves = [], []
    paraphrase = _paraphraser(handle)
    for c, (label, attack, rate) in enumerate(conditions):
        progress(0.72 + 0.25 * c / len(conditions), f"Attack: {label}")
        for method, scorer in scorers.items():
            texts = [g.text for g in gens[method]]
            if attack is not None:
                texts = [apply_attack(attack, t, rate, AttackContext(cfg.attack_seed + k, gens["none"][k].text,
                                                                     paraphrase))
                         for k, t in enumerate(texts)]
            pos = [scorer(t, k) for k, t in enumerate(texts)]
            neg = neg_scores[method]
            rows.append(_row(method, label, [p[0] for p in pos], [n[0] for n in neg], [p[1] for p in pos],
                             [n[1] for n in neg]))
            fpr, tpr = roc_curve([p[0] for p in pos], [n[0] for n in neg])
            curves.append(RocCurve(method, label, fpr, tpr))
    progress(0.97, "Attribution")
    attribution = _attribution(gens["ipmark"], model_address, cfg)
    examples = tuple(gens[m][0] for m in gens) if chosen_prompts else ()
    progress(1.0, "Done")
    return EvalResult(handle.display_name, model_address, len(users), tuple(quality), tuple(rows),
                      tuple(attribution), tuple(curves), examples)


def _attribution(items: list[Generation], model_address: int, cfg: EvalConfig) -> list[AttributionRow]:
    longest = max((len(split_units(g.text)) for g in items), default=0)
    rows = []
    for k in range(1, longest + 1):
        model_ok, user_ok, decided = [], [], []
        for g in items:
            units = split_units(g.text)
            if len(units) < k:
                continue
            report = ipmark_detect(g.text[:units[k - 1].end], cfg.ipmark)
            guess_model = report.top_models[0][0] if report.top_models else 0
            model_ok.append(guess_model == model_address)
            user_ok.append(guess_model == model_address and report.guess_user_address == g.user_address)
            decided.append(report.model_address == model_address and report.user_address == g.user_address)
        if model_ok:
            rows.append(AttributionRow(k, len(model_ok), float(np.mean(model_ok)), float(np.mean(user_ok)),
                                       float(np.mean(decided))))
    return rows


def evaluate(handle: ModelHandle, cfg: EvalConfig = EvalConfig(), progress: Progress = silent) -> Computed[EvalResult]:
    cfg = EvalConfig(**{**cfg.__dict__, "secret_tag": secret_tag()})
    return cached("watermark", "evaluate", ModelRef.of(handle), cfg,
                  lambda: run_evaluation(handle, cfg, scaled(progress, 0.0, 1.0)), code_version=CODE_VERSION)


def latest_evaluation(handle: ModelHandle) -> EvalResult | None:
    """The most recent stored evaluation of this model (any configuration), without computing anything."""
    found = latest("watermark", "evaluate", ModelRef.of(handle), CODE_VERSION)
    return None if found is None else found.value


def benchmark_rows() -> dict:
    """bench/results/watermark.json when it exists (latency figures for the page), else {}."""
    import json

    from backend.config import REPO_ROOT

    path = REPO_ROOT / "bench" / "results" / "watermark.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def generation_costs(handle: ModelHandle, cfg: EvalConfig = EvalConfig()) -> dict[str, dict]:
    """Mean wall time and sentences per generation and method, read from the evaluation's cached generations
    (computed if missing). The times were measured when each text was first generated."""
    model_address, users = eval_identities(handle, cfg.n_users)
    out = {}
    for method in ("none", "ipmark", "kgw"):
        items = []
        for i, prompt in enumerate(prompts()[:cfg.n_prompts]):
            sampling = SamplingConfig(**{**cfg.sampling.__dict__, "seed": cfg.sampling.seed + i})
            req = make_request(prompt, method, model_address, users[i % len(users)], sampling, cfg.ipmark, cfg.kgw)
            items.append(generate(handle, req).value)
        n_sentences = sum(len(g.sentences) for g in items)
        out[method] = {"texts": len(items), "mean_seconds": round(float(np.mean([g.seconds for g in items])), 2),
                       "seconds_per_sentence": round(sum(g.seconds for g in items) / max(n_sentences, 1), 2),
                       "candidates_per_sentence": round(sum(g.candidates_sampled for g in items)
                                                        / max(n_sentences, 1), 2)}
    return out
