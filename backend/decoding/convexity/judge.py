"""Who answers a ConvexBench question: the model, by the log-probabilities of the candidate answers, or an oracle.

A question is a prompt and its candidate answers (one word each). The model judge scores every candidate as a
continuation of the prompt (chat template applied) with one teacher-forced forward through the kernel's
`forward_logits`, and answers the most probable; identical questions are answered once per judge (a decomposed
expression asks the same few node questions many times). The oracle answers `truth`, which a model judge never
reads: it is what the decomposed strategy with correct per-node answers must reach.
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
    log_probs: tuple[float, ...]  # per candidate: total log-probability of its tokens (nats)


class ModelJudge:
    """Answers by the most probable candidate; `forwards` counts the forwards it ran (memo hits run none)."""

    def __init__(self, handle, chat: bool = True) -> None:
        self.handle, self.chat = handle, chat
        self.forwards = 0
        self._memo: dict[tuple[str, tuple[str, ...]], Judged] = {}

    def _candidate_ids(self, candidates: tuple[str, ...], chat_applied: bool) -> list[list[int]]:
        tok = self.handle.tokenizer
        # after a chat template's generation prompt the answer starts the assistant turn; after plain text it
        # follows "Answer:" as a new word
        return [tok(c if chat_applied else f" {c}", add_special_tokens=False)["input_ids"] for c in candidates]

    @torch.no_grad()
    def __call__(self, question: Question) -> Judged:
        key = (question.prompt, question.candidates)
        if key in self._memo:
            return self._memo[key]
        prompt = encode_prompt(self.handle, question.prompt, self.chat)[0].tolist()
        chat_applied = self.chat and bool(self.handle.tokenizer.chat_template)
        cands = self._candidate_ids(question.candidates, chat_applied)
        width = max(len(c) for c in cands)
        pad = self.handle.tokenizer.pad_token_id
        pad = 0 if pad is None else pad
        ids = torch.tensor([prompt + c + [pad] * (width - len(c)) for c in cands])
        mask = torch.tensor([[1] * (len(prompt) + len(c)) + [0] * (width - len(c)) for c in cands])
        logits = forward_logits(self.handle.model, ids, mask, logits_to_keep=width + 1)  # [k, width+1, V]
        logp = torch.log_softmax(logits[:, :-1], dim=-1).cpu()  # position j predicts candidate token j
        scores = tuple(float(sum(logp[i, j, t] for j, t in enumerate(c))) for i, c in enumerate(cands))
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
