"""Who answers a ConvexBench question: the model, by the log-probabilities of the candidate answers, or an oracle.

A question is a prompt and its candidate answers (one word each). The model judge scores every candidate as a
continuation of the prompt (chat template applied, the reply opened with "Answer:") with one teacher-forced forward
through the kernel's `forward_logits`, and answers the most probable; identical questions are answered once per
judge (a decomposed expression asks the same few node questions many times). The oracle answers `truth`, which a
model judge never reads: it is what the decomposed strategy with correct per-node answers must reach.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.models.generate import encode_prompt
from backend.models.rules import forward_logits


@dataclass(frozen=True)
class Question:
    prompt: str
    candidates: tuple[str, ...]
    truth: str  # for the oracle and for scoring; never shown to a model


@dataclass(frozen=True)
class Judged:
    answer: str
    log_probs: tuple[float, ...]  # per candidate: log-probability of its first or all tokens (nats)


ANSWER_PREFIX = "Answer:"  # the reply starts with it, so every candidate is a new word after it


class ModelJudge:
    """Answers by the most probable candidate; `forwards` counts the forwards it ran (memo hits run none).

    When the candidates' first tokens differ (SmolLM2: " convex", " concave", " neither" are one token each) one
    forward of the prompt scores them all by their first token, the token where the model commits to an answer;
    otherwise every candidate is teacher-forced whole in one batched forward and scored by its total log-probability.
    """

    def __init__(self, handle, chat: bool = True) -> None:
        self.handle, self.chat = handle, chat
        self.forwards = 0
        self._memo: dict[tuple[str, tuple[str, ...]], Judged] = {}

    def _context(self, prompt: str) -> list[int]:
        """The prompt (chat template applied) followed by the answer prefix."""
        tok = self.handle.tokenizer
        if self.chat and tok.chat_template:
            prefix = tok(ANSWER_PREFIX, add_special_tokens=False)["input_ids"]
            return encode_prompt(self.handle, prompt)[0].tolist() + prefix
        return encode_prompt(self.handle, f"{prompt}\n{ANSWER_PREFIX}", chat=False)[0].tolist()

    def _candidate_ids(self, candidate: str) -> list[int]:
        tok = self.handle.tokenizer
        prefix = tok(ANSWER_PREFIX, add_special_tokens=False)["input_ids"]
        joined = tok(f"{ANSWER_PREFIX} {candidate}", add_special_tokens=False)["input_ids"]
        if joined[:len(prefix)] == prefix and len(joined) > len(prefix):  # the words as they follow the prefix
            return joined[len(prefix):]
        return tok(f" {candidate}", add_special_tokens=False)["input_ids"]

    @torch.no_grad()
    def first_token_scores(self, context: list[int], cands: list[list[int]]) -> tuple[float, ...]:
        logits = forward_logits(self.handle.model, torch.tensor([context]), logits_to_keep=1)[0, -1]
        logp = torch.log_softmax(logits, dim=-1).cpu()
        return tuple(float(logp[c[0]]) for c in cands)

    @torch.no_grad()
    def full_scores(self, context: list[int], cands: list[list[int]]) -> tuple[float, ...]:
        width = max(len(c) for c in cands)
        pad = self.handle.tokenizer.pad_token_id
        pad = 0 if pad is None else pad
        ids = torch.tensor([context + c + [pad] * (width - len(c)) for c in cands])
        mask = torch.tensor([[1] * (len(context) + len(c)) + [0] * (width - len(c)) for c in cands])
        logits = forward_logits(self.handle.model, ids, mask, logits_to_keep=width + 1)  # [k, width+1, V]
        logp = torch.log_softmax(logits[:, :-1], dim=-1).cpu()  # position j predicts candidate token j
        return tuple(float(sum(logp[i, j, t] for j, t in enumerate(c))) for i, c in enumerate(cands))

    @torch.no_grad()
    def __call__(self, question: Question) -> Judged:
        key = (question.prompt, question.candidates)
        if key in self._memo:
            return self._memo[key]
        context = self._context(question.prompt)
        cands = [self._candidate_ids(c) for c in question.candidates]
        distinct_first = len({c[0] for c in cands}) == len(cands)
        scores = self.first_token_scores(context, cands) if distinct_first else self.full_scores(context, cands)
        self.forwards += 1
        best = max(range(len(scores)), key=scores.__getitem__)
        judged = Judged(answer=question.candidates[best], log_probs=scores)
        self._memo[key] = judged
        return judged


class OracleJudge:
    """Answers every question correctly (the rules' truth): the decomposed strategy's upper bound."""

    forwards = 0

    def __call__(self, question: Question) -> Judged:
        return Judged(answer=question.truth,
                      log_probs=tuple(0.0 if c == question.truth else float("-inf") for c in question.candidates))
