"""Attention patterns of one head (the model's own probabilities under eager attention; with grouped-query
attention the query head's own pattern), and a head drill-down: its pattern and what it writes at one position,
projected to the vocabulary through its W_O slice, the final norm (scale of the full final residual) and the
unembedding, i.e. the head's direct effect on every logit, the same numbers DLA sums. Many heads of one prompt (every
head a map shows) come from one forward (`compute_heads`) and one matrix product onto the vocabulary per 64 heads."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from backend.internals.config import AttentionConfig, HeadConfig
from backend.internals.decompose import decompose, run
from backend.internals.prompt import check_head, check_layer, encode, position_index, token_text
from backend.models.hooks import capture
from backend.models.readout import unembedding
from backend.progress import Progress, silent



@dataclass(frozen=True)
class AttentionResult:
    tokens: tuple[str, ...]
    layer: int
    head: int
    pattern: np.ndarray  # [T queries, T keys], rows sum to 1

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "layer": self.layer, "head": self.head, "pattern": self.pattern.tolist()}


@dataclass(frozen=True)
class TokenEffect:
    token: str
    id: int
    logit: float  # the head's direct contribution to this token's logit


@dataclass(frozen=True)
class HeadResult:
    tokens: tuple[str, ...]
    layer: int
    head: int
    position: int  # 0-based
    pattern: np.ndarray  # [T, T]
    promoted: tuple[TokenEffect, ...]  # largest direct effects, descending
    suppressed: tuple[TokenEffect, ...]  # most negative, ascending
    write_norm: float  # |head write| in the residual stream at the position

    def to_json(self) -> dict:
        effects = lambda items: [{"token": e.token, "id": e.id, "logit": e.logit} for e in items]  # noqa: E731
        return {"tokens": list(self.tokens), "layer": self.layer, "head": self.head, "position": self.position,
                "pattern": self.pattern.tolist(), "promoted": effects(self.promoted),
                "suppressed": effects(self.suppressed), "write_norm": self.write_norm}


def _pattern(traced, layer: int, head: int) -> np.ndarray:
    return traced.patterns[layer][0, head].float().cpu().numpy().astype(np.float32)


@torch.no_grad()
def compute_attention(model, tokenizer, config: AttentionConfig, progress: Progress = silent) -> AttentionResult:
    encoded = encode(model, tokenizer, config.prompt, pattern_layers=1)
    layer, head = check_layer(model, config.layer), check_head(model, config.head)
    progress(0.1, "forward pass under eager attention")
    traced = capture(model, encoded.ids, pattern_layers=(layer,))
    progress(1.0, "pattern read")
    return AttentionResult(tokens=encoded.tokens, layer=layer, head=head, pattern=_pattern(traced, layer, head))


CHUNK = 64  # heads projected onto the vocabulary at once: [64, vocab] fp32 stays under ~64 MB at 256k tokens


def _chunks(indices: list[int]) -> list[list[int]]:
    return [indices[start:start + CHUNK] for start in range(0, len(indices), CHUNK)]


def _listed(tokenizer, ids: torch.Tensor, values: torch.Tensor) -> tuple[TokenEffect, ...]:
    return tuple(TokenEffect(token_text(tokenizer, int(i)), int(i), float(v)) for i, v in zip(ids.tolist(),
                                                                                             values.tolist()))


@torch.no_grad()
def compute_head(model, tokenizer, config: HeadConfig, progress: Progress = silent) -> HeadResult:
    return compute_heads(model, tokenizer, [config], progress)[0]


@torch.no_grad()
def compute_heads(model, tokenizer, configs: Sequence[HeadConfig], progress: Progress = silent) -> list[HeadResult]:
    """Every config's head drill-down, in order: one traced forward per distinct prompt (every layer asked for keeps
    its pattern) and one decomposition per distinct position, so the heads a map shows cost one forward, not one
    each. A single head is the batch of one: the same forward (eager attention either way) and the same arithmetic,
    to the float rounding of a matrix product's width."""
    results: list[HeadResult | None] = [None] * len(configs)
    prompts: dict[str, list[int]] = {}
    for i, config in enumerate(configs):
        prompts.setdefault(config.prompt, []).append(i)
    finished = 0  # heads done: each chunk reports progress, so a Stop (or a rerun) waits for one chunk at most
    for prompt, indices in prompts.items():
        encoded = encode(model, tokenizer, prompt, pattern_layers=len({configs[i].layer for i in indices}))
        for i in indices:
            check_layer(model, configs[i].layer)
            check_head(model, configs[i].head)
        positions = {i: position_index(configs[i].position, encoded.length) for i in indices}
        progress(0.1 + 0.9 * finished / len(configs), "forward pass reading heads and patterns")
        layers = tuple(sorted({configs[i].layer for i in indices}))
        traced, final = run(model, encoded.ids, pattern_layers=layers)
        w_u, _ = unembedding(model)
        parts = {p: decompose(model, traced, final, p) for p in sorted(set(positions.values()))}
        for chunk in _chunks(indices):  # the writes of many heads onto the vocabulary in one matrix product
            writes = torch.stack([parts[positions[i]].heads[configs[i].layer, configs[i].head] for i in chunk])
            scaled_writes = torch.stack([parts[positions[i]].through_final_norm(w) for i, w in zip(chunk, writes)])
            effects = scaled_writes @ w_u.T  # [heads, vocab]
            k = min(max(configs[i].top_k for i in chunk), effects.shape[-1])
            top, bottom = effects.topk(k), (-effects).topk(k)
            for row, i in enumerate(chunk):
                config, kept = configs[i], min(configs[i].top_k, k)
                results[i] = HeadResult(
                    tokens=encoded.tokens, layer=config.layer, head=config.head, position=positions[i],
                    pattern=_pattern(traced, config.layer, config.head),
                    promoted=_listed(tokenizer, top.indices[row, :kept], top.values[row, :kept]),
                    suppressed=_listed(tokenizer, bottom.indices[row, :kept], -bottom.values[row, :kept]),
                    write_norm=float(writes[row].norm()))
            finished += len(chunk)
            progress(0.1 + 0.9 * finished / len(configs), f"{finished} of {len(configs)} heads' writes projected to "
                     "the vocabulary")
    progress(1.0, "head drill-down done" if len(configs) == 1 else f"{len(configs)} head drill-downs done")
    return results
