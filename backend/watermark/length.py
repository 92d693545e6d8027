"""Evidence by length: IPMark attribution accuracy of the first k sentences, k up to 40, with 100 users
per model (bench/watermark_length.py runs it on the embedded model).

Real generations are expensive (B candidates per sentence), so each generated text keeps every
candidate set it sampled (`CandidatePath`, cached in the store: an interrupted run resumes text by
text). `replay` applies another user's keyed choice to the same candidate sets: what that user's
text would have been had each position's candidates been sampled in the same context. The
statistics of detection depend only on the chosen sentences (their signatures), and each set is a
real sample of the model at that point of a long text, so one path gives an attribution trial for
every user of its model; the difference from generating each user's text is that position i+1's
candidates were conditioned on the original writer's sentence i. The original writer's own replay is
the generated text itself (tested), and its accuracy is reported on its own as well.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from backend.models.loading import ModelHandle
from backend.progress import Progress, silent
from backend.store import Computed
from backend.verbs import Verb, register
from backend.watermark.generation import GenerateRequest
from backend.watermark.ipmark.config import IPMarkConfig
from backend.watermark.ipmark.detect import detect_signed
from backend.watermark.ipmark.embed import make_chooser
from backend.watermark.sampling import Candidate, ChosenSentence, sentence_loop
from backend.watermark.signatures import sign_text
from backend.watermark.verb_reads import IPMARK_CHOICE, SENTENCE_LOOP, code_of


@dataclass(frozen=True)
class CandidatePath:
    """One real generation with all its candidate sets: `candidates[i]` [B] at sentence i, `chosen[i]` the index
    the writer's keys picked; `text` is the generated text."""

    model_address: int
    user_address: int
    text: str
    candidates: tuple[tuple[Candidate, ...], ...]
    chosen: tuple[int, ...]
    seconds: float
    context_full: bool = False  # the path ended early: one more sentence would not fit the model's context


@dataclass(frozen=True)
class LengthRow:
    sentences: int  # k: the first k sentences were detected
    n_texts: int
    model_accuracy: float  # best-guess model correct
    user_accuracy: float  # best-guess model and user correct
    user_decided: float  # watermarked verdict, model and user named and right (corrected p <= alpha)
    flagged: float  # verdict "watermarked" (any identity)


def compute_path(handle: ModelHandle, request: GenerateRequest, progress: Progress = silent) -> CandidatePath:
    """The length_path verb's computation: an IPMark generation that keeps every candidate set it sampled."""
    start, sets = time.perf_counter(), []
    inner = make_chooser(request.model_address, request.user_address, request.ipmark)

    def choose(candidates, history):
        sets.append(tuple(candidates))
        return inner(candidates, history)

    loop = sentence_loop(handle, request.prompt, request.sampling, request.ipmark.n_candidates, choose,
                         progress=progress)
    chosen = tuple(_index(s, c) for s, c in zip(sets, loop.sentences))
    return CandidatePath(model_address=request.model_address, user_address=request.user_address, text=loop.text,
                         candidates=tuple(sets[:len(chosen)]), chosen=chosen, seconds=time.perf_counter() - start,
                         context_full=loop.context_full)


def _index(candidates, sentence: ChosenSentence) -> int:
    return next(i for i, c in enumerate(candidates) if c.text == sentence.text)


length_path_verb = register(Verb("watermark", "length_path", GenerateRequest, compute_path,
                                 "an IPMark generation with every candidate set it sampled (evidence by length)",
                                 reads=code_of(_index, CandidatePath, *SENTENCE_LOOP, *IPMARK_CHOICE)))


def generate_path(handle: ModelHandle, request: GenerateRequest, progress: Progress = silent) -> Computed[CandidatePath]:
    """An IPMark generation that records every candidate set (cached under its own action)."""
    return length_path_verb(handle, request, progress)


def replay(path: CandidatePath, model_address: int, user_address: int, cfg: IPMarkConfig = IPMarkConfig()) -> str:
    """The text this user's keys choose from the path's candidate sets (the same rules as the sentence loop)."""
    choose = make_chooser(model_address, user_address, cfg)
    text, history = "", []
    for i, candidates in enumerate(path.candidates):
        pick = choose(list(candidates), history)
        cand = candidates[pick.index]
        if not cand.raw.strip():
            break
        history.append(ChosenSentence(index=i, text=cand.text, level=pick.level, sem_bit=pick.sem_bit,
                                      syn_bit=pick.syn_bit, tier=pick.tier, n_candidates=len(candidates), quality=0.0,
                                      ended=cand.ended))
        text += cand.raw
        if cand.ended == "eos":
            break
    return text.strip()


def attribution_trials(text: str, model_address: int, user_address: int, registry: dict[int, list[int]],
                       lengths: tuple[int, ...], cfg: IPMarkConfig = IPMarkConfig()) -> dict[int, tuple]:
    """{k: (model right, model and user right, decided right, flagged)} for the first k sentences of `text`
    (signed once: a prefix's units and signatures are those of the whole text, see segment.py)."""
    sigs = sign_text(text, cfg.n_bits)
    names = {m: f"model {m}" for m in registry}
    out = {}
    for k in lengths:
        if k > len(sigs):
            break
        r = detect_signed(sigs[:k], cfg, users=registry, names=names)
        model_ok = bool(r.top_models) and r.top_models[0][0] == model_address
        out[k] = (model_ok, model_ok and r.guess_user_address == user_address,
                  r.model_address == model_address and r.user_address == user_address, r.verdict == "watermarked")
    return out


def length_rows(trials: list[dict[int, tuple]]) -> list[LengthRow]:
    """Accuracy per length over texts (a text shorter than k does not count at k)."""
    lengths = sorted({k for t in trials for k in t})
    rows = []
    for k in lengths:
        got = np.array([t[k] for t in trials if k in t], dtype=float)
        model_accuracy, user_accuracy, user_decided, flagged = (round(float(v), 4) for v in got.mean(axis=0))
        rows.append(LengthRow(sentences=k, n_texts=len(got), model_accuracy=model_accuracy, user_accuracy=user_accuracy,
                              user_decided=user_decided, flagged=flagged))
    return rows
