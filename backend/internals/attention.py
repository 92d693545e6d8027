"""Attention patterns of one head (the model's own probabilities under eager attention; with grouped-query
attention the query head's own pattern), and a head drill-down: its pattern and what it writes at one position,
projected to the vocabulary through its W_O slice, the final norm (scale of the full final residual) and the
unembedding, i.e. the head's direct effect on every logit, the same numbers DLA sums."""
from __future__ import annotations

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


@torch.no_grad()
def head_logit_effects(model, traced, final: torch.Tensor, layer: int, head: int, position: int
                       ) -> tuple[torch.Tensor, float]:
    """(`[vocab]` the head's write at `position` through the final norm's linear part and W_U, |write|)."""
    parts = decompose(model, traced, final, position)
    w_u, _ = unembedding(model)
    return w_u @ parts.through_final_norm(parts.heads[layer, head]), float(parts.heads[layer, head].norm())


@torch.no_grad()
def compute_head(model, tokenizer, config: HeadConfig, progress: Progress = silent) -> HeadResult:
    encoded = encode(model, tokenizer, config.prompt, pattern_layers=1)
    layer, head = check_layer(model, config.layer), check_head(model, config.head)
    position = position_index(config.position, encoded.length)
    progress(0.1, "forward pass reading heads and patterns")
    traced, final = run(model, encoded.ids, pattern_layers=(layer,))
    progress(0.7, "projecting the head's write to the vocabulary")
    effects, norm = head_logit_effects(model, traced, final, layer, head, position)
    k = min(config.top_k, effects.shape[0])
    top, bottom = effects.topk(k), (-effects).topk(k)
    listed = lambda ids, values: tuple(TokenEffect(token_text(tokenizer, int(i)), int(i), float(v))  # noqa: E731
                                       for i, v in zip(ids.tolist(), values.tolist()))
    progress(1.0, "head drill-down done")
    return HeadResult(tokens=encoded.tokens, layer=layer, head=head, position=position,
                      pattern=_pattern(traced, layer, head), promoted=listed(top.indices, top.values),
                      suppressed=listed(bottom.indices, -bottom.values), write_norm=norm)
