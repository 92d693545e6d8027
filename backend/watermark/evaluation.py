"""Quality, robustness and attribution evaluation of every registered watermark method on one model, side by side
on the same prompts and attacks (cached in the store).

Per prompt: one generation per registered method (the unwatermarked baseline included), each cached on its own,
so an interrupted evaluation resumes. Negatives: the unwatermarked generations plus the shipped
human-written texts. Each attack is applied to the watermarked texts; ROC-AUC and TPR at 1/5/10%
FPR are measured against the clean negatives. Detection is "is this text watermarked with the keys of
identity k": IPMark's statistic is -log10 p of the total evidence (both levels) under the generating
user's keys (negative k is tested against the k-th identity in turn); KGW's is its z-score under the
model's key; hf-kgw's WatermarkDetector z and SynthID's g-value score z under their settings (no identity).
`detect_ms` is the mean wall time of one detection. `tpr_decision` / `fpr_decision` use each method's own
verdict instead: IPMark's full registry search at family-wise alpha, KGW's z >= 4.

The evaluation's identities (its model, a decoy model, their users) live in a throw-away registry with its own public
root secret (backend.watermark.throwaway): the server's registry is never written and no master-secret key signs
anything, so it needs no key-holder rights.

The cached computation is the verb `evaluate_verb` ("watermark evaluate"); its generations and paraphrases are
the generate and paraphrase verbs' own artifacts, used by it.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from backend.models.loading import ModelHandle
from backend.params import Config, param, require
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.verbs import Verb, register
import backend.watermark.attacks as attacks
import backend.watermark.identities as identities
import backend.watermark.metrics as metrics
import backend.watermark.quality as quality_measures  # `quality` is the rows' name below
import backend.watermark.throwaway as throwaway
from backend.watermark.attacks import ATTACKS, AttackContext, apply_attack
from backend.watermark.corpus import human_texts, prompts
from backend.watermark.generation import Generation, generate, generate_verb, make_request
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.keys import secret_tag
from backend.watermark.hf_kgw.config import HFKGWConfig
from backend.watermark.kgw.config import KGWConfig
from backend.watermark.methods import BASELINE, METHODS, DetectRequest, WatermarkMethod, detect
from backend.watermark.metrics import roc_auc, roc_curve, tpr_at_fpr
from backend.watermark.paraphrase import paraphrase_fits, paraphrase_verb, paraphraser
from backend.watermark.quality import perplexity
from backend.watermark.sampling import SamplingConfig
from backend.watermark.segment import split_units
from backend.watermark.synthid.config import SynthIDConfig
from backend.watermark.throwaway import throwaway_registry
from backend.watermark.verb_reads import CORPUS, DETECTION, code_of

DEFAULT_ATTACKS = (("synonym_substitution", 0.1), ("synonym_substitution", 0.3), ("word_deletion", 0.1),
                   ("copy_paste", 0.5), ("sentence_shuffle", 1.0), ("sentence_deletion", 0.3),
                   ("lm_paraphrase", 1.0))
FPRS = (0.01, 0.05, 0.10)


@dataclass(frozen=True)
class EvalConfig(Config):
    """Fields named after a method hold its config (see GenerateRequest)."""

    n_prompts: int = param(10, "prompts from the shipped list (one generation per method each)", ge=1)
    n_users: int = param(24, "users of the evaluation's model identity (a decoy model gets as many)", ge=1)
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    ipmark: IPMarkConfig = field(default_factory=IPMarkConfig)
    kgw: KGWConfig = field(default_factory=KGWConfig)
    hf_kgw: HFKGWConfig = field(default_factory=HFKGWConfig)
    synthid: SynthIDConfig = field(default_factory=SynthIDConfig)
    attacks: tuple[tuple[str, float], ...] = DEFAULT_ATTACKS  # (attack name, rate)
    methods: tuple[str, ...] = ()  # the registered methods to compare (empty: all; the baseline always runs)
    attack_seed: int = 0
    secret_tag: str = ""

    def __post_init__(self):
        super().__post_init__()
        for name, rate in self.attacks:
            ATTACKS.get(name)
            require(0 <= rate <= 1, f"The rate of attack {name} must be between 0 and 1, got {rate:g}.")
        for name in self.methods:
            METHODS.get(name)

    def compared(self) -> list[WatermarkMethod]:
        """The methods this evaluation generates with, the unwatermarked baseline first."""
        return [m for m in METHODS if m.is_baseline or not self.methods or m.name in self.methods]

    def method_configs(self) -> tuple:
        return tuple(m.config_in(self) for m in METHODS if m.config is not None)


@dataclass(frozen=True)
class QualityRow:
    method: str  # a METHODS name ("none": the unwatermarked baseline)
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
    detect_ms: float = float("nan")  # mean wall time of one detection over this row's texts (nan: not measured)
    skipped: int = 0  # texts left out by the context rule (an attack by the model whose request would not fit)


@dataclass(frozen=True)
class AttributionRow:
    sentences: int  # the first k sentences of each text of a method that identifies users
    n_texts: int
    model_accuracy: float  # best-guess model correct
    user_accuracy: float  # best-guess model and user correct
    user_decided: float  # share where the user passed its significance test (and was right)
    method: str = ""  # "" in results stored before this field (then IPMark's)


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
    quality: tuple[QualityRow, ...]  # one per compared method, the baseline first
    detection: tuple[DetectionRow, ...]  # one per (condition, watermarked method): "clean" first, then each attack
    attribution: tuple[AttributionRow, ...]
    curves: tuple[RocCurve, ...]  # one per detection row, in its order
    examples: tuple[Generation, ...]  # the first prompt's generation by each method (side by side)


def eval_identities(handle: ModelHandle, n_users: int) -> tuple[int, list[int]]:
    """The evaluation's model identity (plus a decoy model with as many users, so retrieval has a choice), added to
    the registry in use: callers run inside `throwaway_registry()`."""
    model = identities.get_or_add_model(f"eval:{handle.id}")
    decoy = identities.get_or_add_model(f"eval-decoy:{handle.id}")
    users = identities.ensure_users(model.address, n_users, "eval")
    identities.ensure_users(decoy.address, n_users, "decoy")
    return model.address, [u.user_address for u in users]


def _row(method, condition, pos, neg, flagged_pos, flagged_neg, seconds=()) -> DetectionRow:
    tpr_1, tpr_5, tpr_10 = (tpr_at_fpr(pos, neg, f) for f in FPRS)
    return DetectionRow(method=method, condition=condition, auc=roc_auc(pos, neg), tpr_1=tpr_1, tpr_5=tpr_5,
                        tpr_10=tpr_10, tpr_decision=float(np.mean(flagged_pos)) if flagged_pos else float("nan"),
                        fpr_decision=float(np.mean(flagged_neg)) if flagged_neg else float("nan"), n_pos=len(pos),
                        n_neg=len(neg), detect_ms=1000 * float(np.mean(seconds)) if seconds else float("nan"))


def _generations(handle: ModelHandle, cfg: EvalConfig, model_address: int, users: list[int],
                 progress: Progress = silent) -> dict[str, list[Generation]]:
    """Per method (the baseline first), one cached generation per prompt; prompt i writes as user i mod U."""
    chosen_prompts = prompts()[:cfg.n_prompts]
    gens: dict[str, list[Generation]] = {m.name: [] for m in cfg.compared()}
    for i, prompt in enumerate(chosen_prompts):
        sampling = replace(cfg.sampling, seed=cfg.sampling.seed + i)
        for j, method in enumerate(gens):
            progress((i * len(gens) + j) / (len(gens) * len(chosen_prompts)),
                     f"Generating {method} text {i + 1}/{len(chosen_prompts)}")
            req = make_request(prompt, method, model_address, users[i % len(users)], sampling, *cfg.method_configs())
            gens[method].append(generate(handle, req).value)
    return gens


def run_evaluation(handle: ModelHandle, cfg: EvalConfig, progress: Progress = silent) -> EvalResult:
    with throwaway_registry():
        return _run(handle, cfg, progress)


def _run(handle: ModelHandle, cfg: EvalConfig, progress: Progress) -> EvalResult:
    model_address, users = eval_identities(handle, cfg.n_users)
    gens = _generations(handle, cfg, model_address, users, scaled(progress, 0.0, 0.7))
    progress(0.7, "Perplexity")
    quality = []
    for method, items in gens.items():
        ppl = [perplexity(handle, g.prompt, g.text, cfg.sampling.chat) for g in items]
        ppl = [p for p in ppl if np.isfinite(p)]
        quality.append(QualityRow(method=method, ppl_mean=float(np.mean(ppl)) if ppl else float("nan"),
                                  ppl_median=float(np.median(ppl)) if ppl else float("nan"),
                                  sentences_mean=float(np.mean([len(split_units(g.text)) for g in items])),
                                  words_mean=float(np.mean([len(g.text.split()) for g in items])), n=len(items)))
    baseline = gens[BASELINE]
    negatives = [g.text for g in baseline] + list(human_texts())
    watermarks = [m for m in cfg.compared() if not m.is_baseline]

    def score(method: WatermarkMethod, text: str, k: int) -> tuple[float, bool, float]:
        """The method's statistic under the identity of text k (user k mod U); flag = its own verdict; seconds."""
        start = time.perf_counter()
        found = detect(text, DetectRequest(method.name, model_address=model_address,
                                           user_address=users[k % len(users)], config=method.config_in(cfg),
                                           handle=handle if method.needs_model_to_detect else None))
        return found.score, found.flagged, time.perf_counter() - start

    neg_scores = {m.name: [score(m, t, k) for k, t in enumerate(negatives)] for m in watermarks}
    conditions = [("clean", None, 0.0)] + [(f"{a} {r:g}", a, r) for a, r in cfg.attacks]
    rows, curves = [], []
    paraphrase = paraphraser(handle)
    for c, (label, attack, rate) in enumerate(conditions):
        progress(0.72 + 0.25 * c / len(conditions), f"Attack: {label}")
        for method in watermarks:
            texts = dict(enumerate(g.text for g in gens[method.name]))  # text k keeps identity k (see score)
            if attack is not None:
                if ATTACKS.get(attack).needs_model:  # the context rule for batches: skip and count (row.skipped)
                    texts = {k: t for k, t in texts.items() if paraphrase_fits(handle, t)}
                texts = {k: apply_attack(attack, t, rate, AttackContext(seed=cfg.attack_seed + k,
                                                                        other_text=baseline[k].text,
                                                                        paraphrase=paraphrase))
                         for k, t in texts.items()}
            pos = [score(method, t, k) for k, t in texts.items()]
            neg = neg_scores[method.name]
            rows.append(replace(_row(method.name, label, [p[0] for p in pos], [n[0] for n in neg],
                                     [p[1] for p in pos], [n[1] for n in neg], [x[2] for x in pos + neg]),
                                skipped=len(gens[method.name]) - len(texts)))
            fpr, tpr = roc_curve([p[0] for p in pos], [n[0] for n in neg])
            curves.append(RocCurve(method=method.name, condition=label, fpr=fpr, tpr=tpr))
    progress(0.97, "Attribution")
    attribution = [row for m in watermarks if m.identifies_users
                   for row in _attribution(m, gens[m.name], model_address, cfg)]
    examples = tuple(items[0] for items in gens.values() if items)
    progress(1.0, "Done")
    return EvalResult(model_name=handle.display_name, model_address=model_address, n_users=len(users),
                      quality=tuple(quality), detection=tuple(rows), attribution=tuple(attribution),
                      curves=tuple(curves), examples=examples)


def _attribution(method: WatermarkMethod, items: list[Generation], model_address: int,
                 cfg: EvalConfig) -> list[AttributionRow]:
    """Who wrote the first k sentences, for every k: the method's registry search against the truth."""
    longest = max((len(split_units(g.text)) for g in items), default=0)
    rows = []
    for k in range(1, longest + 1):
        model_ok, user_ok, decided = [], [], []
        for g in items:
            units = split_units(g.text)
            if len(units) < k:
                continue
            found = detect(g.text[:units[k - 1].end], DetectRequest(method.name, config=method.config_in(cfg)))
            model_ok.append(found.guess_model == model_address)
            user_ok.append(found.guess_model == model_address and found.guess_user == g.user_address)
            decided.append(found.model_address == model_address and found.user_address == g.user_address)
        if model_ok:
            rows.append(AttributionRow(sentences=k, n_texts=len(model_ok), model_accuracy=float(np.mean(model_ok)),
                                       user_accuracy=float(np.mean(user_ok)), user_decided=float(np.mean(decided)),
                                       method=method.name))
    return rows


def evaluation_key(handle: ModelHandle, cfg: EvalConfig) -> EvalConfig:
    """The store key: the config with the tag of the throw-away root it runs under (the results do not depend on the
    master secret, whose tag never enters it)."""
    with throwaway_registry():
        return replace(cfg, secret_tag=secret_tag())


# Reads this whole module (the rows, curves and attribution it computes), the code of the texts it stores as
# examples and scores (its generations and paraphrases), every method's detection, the attacks, the quality and
# ROC measures, and the registry its identities live in.
evaluate_verb = register(Verb(
    "watermark", "evaluate", EvalConfig, run_evaluation,
    "every registered method side by side on one model: quality, detection under attacks, attribution",
    reads=code_of(sys.modules[__name__], generate_verb.compute, *generate_verb.reads, paraphrase_verb.compute,
                  *paraphrase_verb.reads, *DETECTION, attacks, metrics, quality_measures, throwaway, identities,
                  *CORPUS),
    key=evaluation_key))


def evaluate(handle: ModelHandle, cfg: EvalConfig = EvalConfig(), progress: Progress = silent) -> Computed[EvalResult]:
    """The stored evaluation of this model and config, or computed now (see `evaluate_verb`)."""
    return evaluate_verb(handle, cfg, progress)


def latest_evaluation(handle: ModelHandle) -> EvalResult | None:
    """The most recent stored evaluation of this model (any configuration), without computing anything."""
    found = evaluate_verb.latest(handle)
    return None if found is None else found.value


def generation_costs(handle: ModelHandle, cfg: EvalConfig = EvalConfig()) -> dict[str, dict]:
    """Mean wall time and sentences per generation and method, read from the evaluation's cached generations
    (computed if missing). The times were measured when each text was first generated."""
    with throwaway_registry():
        model_address, users = eval_identities(handle, cfg.n_users)
        gens = _generations(handle, cfg, model_address, users)
    out = {}
    for method, items in gens.items():
        n_sentences = sum(len(g.sentences) for g in items)
        out[method] = {"texts": len(items), "mean_seconds": round(float(np.mean([g.seconds for g in items])), 2),
                       "seconds_per_sentence": round(sum(g.seconds for g in items) / max(n_sentences, 1), 2),
                       "candidates_per_sentence": round(sum(g.candidates_sampled for g in items)
                                                        / max(n_sentences, 1), 2)}
    return out
