"""Sentence-by-sentence generation on the project's incremental decoder.

For each next sentence, `n` candidate continuations are sampled in one batch (the prompt and the
accepted text are prefilled once and broadcast to n rows); a row stops as soon as the segmenter
(backend.watermark.segment) says its first sentence unit is complete, at a stop id, or at
`max_sentence_tokens` (the unit is then closed with "."). With `continue_past_eos` (the default) the
end-of-answer token is masked until `max_sentences` sentences are written, so a model that closes its
answer after a few sentences keeps writing (the evidence of a sentence-level watermark grows with the
number of sentences; the embedded SmolLM2 stops after about five otherwise). Finished rows are dropped from the batch
(cache rows reordered away). After the first sentence, the first token of every candidate must start
with whitespace, so a new sentence can never glue onto the previous one (generation-time and
detection-time segmentation stay identical). A `choose` callback picks one candidate; `on_sentence` streams the
loop's result so far (a LoopResult) after each chosen sentence.
The same loop serves IPMark (n = B, keyed choice), KGW (n = 1, a logits processor) and the
unwatermarked baseline (n = 1), so all three segment, sample and stop identically.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from backend.models.kernel import Processor, decode, sampling_policy, start, temperature
from backend.models.rules import fits, special_ids, stop_ids
from backend.models.generate import encode_prompt
from backend.models.loading import ModelHandle
from backend.models.reduced import PRECISIONS
from backend.params import Config, param
from backend.progress import Progress, silent
from backend.watermark.segment import split_units

TERMINAL = ".!?\u2026"


@dataclass(frozen=True)
class SamplingConfig(Config):
    """How candidates are sampled (shared by all methods; part of every cache key)."""

    max_sentences: int = param(6, "sentences to generate", ge=1, le=50)
    continue_past_eos: bool = param(True, "keep writing until the requested number of sentences (the end-of-answer "
                                          "token is suppressed); off: stop where the model ends its answer")
    temperature: float = param(0.7, "sampling temperature", ge=0)
    repetition_penalty: float = param(1.1, "on tokens already in the response (CTRL-style)", gt=0)
    max_sentence_tokens: int = param(64, "a sentence is closed after this many tokens", ge=1)
    seed: int = param(0, "random seed of the sampler")
    chat: bool = param(True, "wrap the prompt in the model's chat template")
    precision: str = param("reference", "weights the candidates are sampled with: reference (the model's own), or "
                                        "an int8 / bf16 copy or packed weights (faster on a CPU; detection always "
                                        "scores the text alone)",
                           choices=PRECISIONS, keyed_when_set=True)


@dataclass(frozen=True)
class Candidate:
    raw: str  # the text appended to the document (leading whitespace included)
    text: str  # the sentence unit, stripped
    tokens: int
    logprob: float  # sum of model log-probabilities (temperature 1) of its tokens
    ended: str  # "sentence" | "eos" | "limit"
    valid: bool  # False when it would glue onto the previous sentence (segmentation would change)

    def quality(self, exponent: float = 0.7) -> float:
        """Length-normalised log-likelihood, IPMark's candidate ranking."""
        return self.logprob / max(self.tokens, 1) ** exponent


def _penalise(logits: torch.Tensor, seen: torch.Tensor, penalty: float) -> torch.Tensor:
    if penalty == 1.0:
        return logits
    hit = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, hit, logits)


def _finish(tail: str, text: str) -> tuple[str, str, bool] | None:
    """(raw, unit text, valid) when the candidate's first unit is complete, else None."""
    units = split_units(tail + text)
    skip = 1 if tail.strip() else 0
    if len(units) < skip + 2:
        return None
    unit = units[skip]
    valid = skip == 0 or units[0].end <= len(tail)
    return (tail + text)[len(tail):unit.end], unit.text, valid


def _close(tail: str, text: str) -> tuple[str, str, bool]:
    """A candidate cut at EOS or the token limit: all of its text is one unit."""
    units = split_units(tail + text)
    skip = 1 if tail.strip() else 0
    valid = len(units) <= skip + 1 and (skip == 0 or units[0].end <= len(tail))
    raw = text.rstrip()
    body = units[-1].text if len(units) > skip else raw.strip()
    return raw, body, valid


@torch.no_grad()
def sample_candidates(handle: ModelHandle, context: torch.Tensor, tail: str, n: int, cfg: SamplingConfig,
                      generator: torch.Generator, response_ids: list[int],
                      logits_processors: Sequence[Processor] = (),
                      watermark_processors: Sequence[Processor] = ()) -> list[Candidate]:
    """n candidate next sentences after `context` [1, T]; `tail` is the last accepted unit's raw text.

    A policy over the kernel, with transformers' processor order: the loop's own rules (repetition penalty, a new
    sentence starts with whitespace, no end of answer), the method's `logits_processors`, the temperature, then its
    `watermark_processors` (where `generate` applies a watermark: transformers' KGW and SynthID go in as they
    are), and the kernel's sampler. Rows whose sentence is complete (or that wrote a stop id) are dropped from the
    batch through the kernel's `select`, so the remaining candidates keep decoding alone."""
    tok = handle.tokenizer
    stops = stop_ids(handle)
    decoder = start(handle.model, context, n=n, max_new_tokens=cfg.max_sentence_tokens, precision=cfg.precision)
    vocab = decoder.logits.shape[-1]
    seen = torch.zeros(n, vocab, dtype=torch.bool, device=decoder.logits.device)
    if response_ids:
        seen[:, torch.tensor(sorted(set(response_ids)), device=seen.device).clamp(max=vocab - 1)] = True
    rows = list(range(n))  # candidate id of each live decoder row
    tokens: list[list[int]] = [[] for _ in range(n)]
    logps: list[list[float]] = [[] for _ in range(n)]
    done: dict[int, Candidate] = {}
    raw_logp: list[torch.Tensor] = []
    first_step = context.shape[1]  # input_ids this long: the sentence's first token is being chosen

    def repetition_penalty(input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        return _penalise(scores, seen[rows], cfg.repetition_penalty)

    def whitespace_start(input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if input_ids.shape[1] != first_step:  # only a sentence's first token could glue onto the last sentence
            return scores
        return scores.masked_fill(~_space_start(handle, vocab).to(scores.device), float("-inf"))

    def no_end_of_answer(input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        # no end of answer, and no other special token that would open a new turn
        return scores.index_fill(1, _special_ids(handle, vocab).to(scores.device), float("-inf"))

    processors = [repetition_penalty, *([whitespace_start] if tail.strip() else []),
                  *([no_end_of_answer] if cfg.continue_past_eos else []), *logits_processors,
                  temperature(max(cfg.temperature, 1e-4)), *watermark_processors]
    sample = sampling_policy(1.0, generator)  # the scores arrive divided by the temperature

    def policy(step: int, scores: torch.Tensor) -> torch.Tensor:
        raw_logp[:] = [torch.log_softmax(decoder.logits, dim=-1)]  # the model's own distribution, for quality
        return sample(step, scores)

    sentences: dict[int, tuple[str, str, bool]] = {}  # row -> the sentence its last token closed (this step)

    def sentence_ended(generated: torch.Tensor) -> torch.Tensor:
        """The feature's own stop, passed to the kernel as a criterion: the row's text has closed a sentence."""
        sentences.clear()
        for r, ids in enumerate(generated.tolist()):
            finished = _finish(tail, tok.decode(ids, skip_special_tokens=True))
            if finished is not None:
                sentences[r] = finished
        return torch.tensor([r in sentences for r in range(generated.shape[0])], dtype=torch.bool)

    def select(step: int, picked: torch.Tensor) -> torch.Tensor | None:
        nonlocal rows
        # ended rows leave the batch: on a stop id (the kernel's stop rule) or on a closed sentence (the criterion,
        # which a stop id, being no text, never meets)
        keep, ended = [], decoder.finished.tolist()
        for r, cid in enumerate(rows):
            t = int(picked[r])
            if ended[r] and r not in sentences:
                raw, body, valid = _close(tail, tok.decode(tokens[cid], skip_special_tokens=True))
                done[cid] = Candidate(raw=raw, text=body, tokens=len(tokens[cid]), logprob=sum(logps[cid]), ended="eos",
                                      valid=valid)
                continue
            tokens[cid].append(t)
            logps[cid].append(float(raw_logp[0][r, t]))
            seen[cid, t] = True
            finished = sentences.get(r)
            if finished is not None:
                raw, body, valid = finished
                k = _tokens_covering(tok, tokens[cid], len(raw))
                done[cid] = Candidate(raw=raw, text=body, tokens=k, logprob=sum(logps[cid][:k]), ended="sentence",
                                      valid=valid)
            else:
                keep.append(r)
        if len(keep) == len(rows):
            return None  # every candidate goes on: no cache rows to move
        rows = [rows[r] for r in keep]
        return torch.tensor(keep, dtype=torch.long)

    decode(decoder, policy, cfg.max_sentence_tokens, tuple(stops), processors=processors, select=select,
           criteria=(sentence_ended,))
    for cid in range(n):  # rows that ran out of tokens: close the sentence where it stands
        if cid not in done:
            raw, body, valid = _close(tail, tok.decode(tokens[cid], skip_special_tokens=True))
            if raw.strip() and raw.rstrip()[-1] not in TERMINAL:
                raw, body = raw + ".", body + "."
            done[cid] = Candidate(raw=raw, text=body, tokens=len(tokens[cid]), logprob=sum(logps[cid]), ended="limit",
                                  valid=valid)
    return [done[c] for c in range(n)]


def room_for_sentence(handle: ModelHandle, context_tokens: int, cfg: SamplingConfig) -> bool:
    """Whether one more sentence of up to max_sentence_tokens fits the model's context after the text so far."""
    return fits(handle.model, context_tokens, cfg.max_sentence_tokens)


def _special_ids(handle: ModelHandle, vocab: int) -> torch.Tensor:
    """`[k]` ids inside the vocabulary that are not text: the stop ids (the one stop rule) and the tokenizer's
    other special tokens (one would open a new turn)."""
    ids = {i for i in stop_ids(handle) | special_ids(handle.tokenizer) if 0 <= i < vocab}
    return torch.tensor(sorted(ids), dtype=torch.long)


_space_masks: dict[tuple[str, int, frozenset[int]], torch.Tensor] = {}


def _space_start(handle: ModelHandle, vocab: int) -> torch.Tensor:
    """`[vocab]` bool: tokens whose text starts with whitespace, plus the stop ids (computed once per model)."""
    stops = stop_ids(handle)
    key = (handle.fingerprint, vocab, stops)
    if key not in _space_masks:
        tok = handle.tokenizer
        n = min(vocab, len(tok))
        mask = torch.zeros(vocab, dtype=torch.bool)
        mask[:n] = torch.tensor([tok.decode([i])[:1].isspace() for i in range(n)])
        mask[torch.tensor([i for i in stops if 0 <= i < vocab], dtype=torch.long)] = True
        _space_masks[key] = mask
    return _space_masks[key]


def _tokens_covering(tok, ids: list[int], n_chars: int) -> int:
    """How many of the tokens it takes to produce the first n_chars characters (the rest started the next unit)."""
    k = len(ids)
    while k > 1 and len(tok.decode(ids[:k - 1], skip_special_tokens=True)) >= n_chars:
        k -= 1
    return k


@dataclass(frozen=True)
class Chosen:
    """What a chooser returns: the index of the candidate to keep and what to report about it."""

    index: int
    level: str = ""
    sem_bit: int = -1
    syn_bit: int = -1
    tier: int = -1


@dataclass(frozen=True)
class ChosenSentence:
    """One sentence as it was chosen (streamed to the page)."""

    index: int
    text: str
    level: str  # "model" | "user" | "" (not an IPMark sentence)
    sem_bit: int
    syn_bit: int
    tier: int  # IPMark: 3 both bits, 2 semantic only, 1 syntactic only, 0 none; -1 otherwise
    n_candidates: int
    quality: float
    ended: str
    candidates: tuple[str, ...] = ()  # the sentences it was chosen among, when there were several (IPMark's B)


@dataclass(frozen=True)
class LoopResult:
    text: str
    sentences: tuple[ChosenSentence, ...]
    candidates_sampled: int
    context_full: bool = False  # the text ended early: one more sentence would not fit the model's context


def sentence_loop(handle: ModelHandle, prompt: str, cfg: SamplingConfig, n: int,
                  choose: Callable[[list[Candidate], list[ChosenSentence]], Chosen],
                  logits_processors: Sequence[Processor] = (), watermark_processors: Sequence[Processor] = (),
                  on_sentence: Callable[[LoopResult], None] | None = None,
                  progress: Progress = silent) -> LoopResult:
    prompt_ids = encode_prompt(handle, prompt, chat=cfg.chat)
    generator = torch.Generator().manual_seed(int(cfg.seed))
    text, tail, chosen, sampled, full = "", "", [], 0, False
    for i in range(cfg.max_sentences):
        progress(i / cfg.max_sentences, f"Sentence {i + 1} of at most {cfg.max_sentences}")
        response = handle.tokenizer(text, add_special_tokens=False)["input_ids"] if text else []
        context = torch.cat([prompt_ids, torch.tensor([response], dtype=prompt_ids.dtype)], dim=1) \
            if response else prompt_ids
        if i > 0 and not room_for_sentence(handle, context.shape[1], cfg):
            full = True  # the context rule: the text ends with the sentences that fit, and the result says so
            break  # (the first sentence is the kernel's to refuse: `start` asks the rule before any forward)
        candidates = sample_candidates(handle, context, tail, n, cfg, generator, response, logits_processors,
                                       watermark_processors)
        sampled += n
        pick = choose(candidates, chosen)
        cand = candidates[pick.index]
        if not cand.raw.strip():  # the model chose to stop (EOS right away): nothing to add
            break
        sentence = ChosenSentence(index=i, text=cand.text, level=pick.level, sem_bit=pick.sem_bit, syn_bit=pick.syn_bit,
                                  tier=pick.tier, n_candidates=n, quality=round(cand.quality(), 4), ended=cand.ended,
                                  candidates=tuple(c.text for c in candidates) if n > 1 else ())
        chosen.append(sentence)
        text += cand.raw
        tail = cand.raw
        if on_sentence is not None:  # the text so far is exactly how the finished text begins
            on_sentence(LoopResult(text=text.strip(), sentences=tuple(chosen), candidates_sampled=sampled))
        if cand.ended == "eos":
            break
    progress(1.0, f"{len(chosen)} sentences")
    return LoopResult(text=text.strip(), sentences=tuple(chosen), candidates_sampled=sampled, context_full=full)


def first_candidate(candidates: list[Candidate], history: list[ChosenSentence]) -> Chosen:
    """The unwatermarked / KGW choice: the only (or first) candidate."""
    return Chosen(0)


def finite(value: float) -> float:
    return value if math.isfinite(value) else -1e9
