"""Every head scored on one token sequence, and every head's pattern of one layer (the all-heads grid).

Scores, each a mean over the query positions it applies to of the attention mass `[L, H]` goes to:
  previous   the token just before (queries 1..T-1)
  duplicate  earlier positions holding the same token (queries whose token occurred before)
  induction  the positions just after an earlier copy of the query's token, the query itself excluded
             (queries with such a position): on a random sequence repeated twice, the head that copies the
             continuation of the first copy scores near 1
  sink       the first position (queries 1..T-1)
The sequence is the prompt, or (`repeat` > 0) `repeat` random tokens written twice after the tokenizer's own
prefix (the induction test; seeded)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import UserError
from backend.internals.graph_config import GridConfig, HeadScoresConfig
from backend.internals.prompt import Encoded, check_layer, encode, token_text
from backend.models.hooks import capture
from backend.models.rules import check_room
from backend.progress import Progress, silent



def repeated_random(model, tokenizer, length: int, seed: int) -> Encoded:
    """`length` random ordinary tokens, twice, after what the tokenizer puts before any text (e.g. BOS)."""
    prefix = tokenizer("")["input_ids"]
    special = set(tokenizer.all_special_ids)
    pool = torch.tensor([i for i in range(len(tokenizer)) if i not in special])
    picked = pool[torch.randint(len(pool), (length,), generator=torch.Generator().manual_seed(seed))].tolist()
    ids = prefix + picked + picked
    check_room(model, len(ids), 0, "The repeated sequence")
    device = next(model.parameters()).device
    return Encoded(torch.tensor([ids], device=device), tuple(token_text(tokenizer, i) for i in ids))


def sequence(model, tokenizer, prompt: str, repeat: int, seed: int) -> Encoded:
    return repeated_random(model, tokenizer, repeat, seed) if repeat else encode(model, tokenizer, prompt)


def target_mask(ids: list[int], score: str) -> np.ndarray:
    """`[T, T]` 0/1: which keys each query's score sums (rows with none are not averaged)."""
    length = len(ids)
    mask = np.zeros((length, length), dtype=np.float32)
    same = np.equal.outer(ids, ids) & np.tri(length, k=-1, dtype=bool)  # earlier copies of the query's token
    if score == "previous":
        mask[np.arange(1, length), np.arange(length - 1)] = 1
    elif score == "sink":
        mask[1:, 0] = 1
    elif score == "duplicate":
        mask[same] = 1
    else:  # induction: the key after each earlier copy, before the query
        queries, copies = np.nonzero(same)
        keep = copies + 1 < queries
        mask[queries[keep], copies[keep] + 1] = 1
    return mask


@dataclass(frozen=True)
class HeadScoresResult:
    tokens: tuple[str, ...]
    score: str
    scores: np.ndarray  # [L, H], each in [0, 1]
    queries: int  # query positions averaged
    repeat: int  # 0: the prompt; else the random half-length

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "score": self.score, "scores": self.scores.tolist(),
                "queries": self.queries, "repeat": self.repeat}


@dataclass(frozen=True)
class GridResult:
    tokens: tuple[str, ...]
    layer: int  # -1: the top heads by a score, from any layer
    heads: tuple[tuple[int, int], ...]  # (layer, head) of each pattern
    patterns: np.ndarray  # [len(heads), T, T], rows sum to 1

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "layer": self.layer, "heads": [list(h) for h in self.heads],
                "patterns": self.patterns.tolist()}


def checked_mask(ids: list[int], score: str) -> tuple[np.ndarray, np.ndarray]:
    """(target mask `[T, T]`, the queries that have a target `[T]`); refuses a sequence where none has one."""
    mask = target_mask(ids, score)
    rows = mask.sum(1) > 0
    if not rows.any():
        raise UserError(f"No position of this sequence has a {score} target (no token occurs twice, or "
                        "the prompt is one token): use a longer prompt, or the induction test (repeat > 0).")
    return mask, rows


def score_patterns(patterns: np.ndarray, mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`[L, H]` scores of patterns `[L, H, T, T]`: the mean over the queries `rows` of their mass on `mask`."""
    return (patterns * mask).sum(-1)[..., rows].mean(-1).astype(np.float32)


def all_patterns(model, encoded: Encoded, progress: Progress) -> np.ndarray:
    progress(0.1, "forward pass under eager attention")
    traced = capture(model, encoded.ids, attentions=True)
    return torch.stack([a[0].float() for a in traced.attentions]).cpu().numpy()  # [L, H, T, T]


@torch.no_grad()
def compute_head_scores(model, tokenizer, config: HeadScoresConfig, progress: Progress = silent) -> HeadScoresResult:
    encoded = sequence(model, tokenizer, config.prompt, config.repeat, config.seed)
    mask, rows = checked_mask(encoded.ids[0].tolist(), config.score)  # before any forward
    scores = score_patterns(all_patterns(model, encoded, progress), mask, rows)
    progress(1.0, "heads scored")
    return HeadScoresResult(tokens=encoded.tokens, score=config.score, scores=scores, queries=int(rows.sum()),
                            repeat=config.repeat)


@torch.no_grad()
def compute_grid(model, tokenizer, config: GridConfig, progress: Progress = silent) -> GridResult:
    """The layer's heads, or (with a score) the top_k heads of every layer by that score on the same sequence."""
    encoded = sequence(model, tokenizer, config.prompt, config.repeat, config.seed)
    layer = check_layer(model, config.layer) if not config.score else -1
    mask, rows = checked_mask(encoded.ids[0].tolist(), config.score) if config.score else (None, None)
    patterns = all_patterns(model, encoded, progress)
    if config.score:
        scores = score_patterns(patterns, mask, rows)
        order = np.argsort(-scores, axis=None, kind="stable")[:config.top_k]
        heads = tuple((int(i) // scores.shape[1], int(i) % scores.shape[1]) for i in order)
    else:
        heads = tuple((layer, h) for h in range(patterns.shape[1]))
    progress(1.0, "patterns read")
    return GridResult(tokens=encoded.tokens, layer=layer, heads=heads,
                      patterns=np.stack([patterns[l, h] for l, h in heads]).astype(np.float32))
