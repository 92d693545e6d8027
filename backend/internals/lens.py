"""Logit lens: the residual stream after each layer read out as the model reads its last one (final norm,
unembedding, final-logit soft-capping). Layer 0 is the embeddings; layer L is the model's own output."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from backend.internals.config import LensConfig
from backend.internals.decompose import run
from backend.internals.prompt import encode, position_index, single_token, token_text
from backend.models.architecture import arch_info
from backend.models.readout import readout_logits, softcap
from backend.progress import Progress, silent



@dataclass(frozen=True)
class LensResult:
    """Shapes: L + 1 read-outs (embeddings, then after each layer), T positions, k kept tokens."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    top_ids: np.ndarray  # [L + 1, T, k]
    top_probs: np.ndarray  # [L + 1, T, k]
    top_tokens: tuple[tuple[tuple[str, ...], ...], ...]  # [L + 1][T][k]
    position: int  # 0-based index the final prediction is traced at
    predicted_id: int  # the model's own top-1 there
    predicted_token: str
    predicted_prob: np.ndarray  # [L + 1] its probability at each read-out
    predicted_rank: np.ndarray  # [L + 1] its rank (0 = top) at each read-out
    softcap: float | None
    tracked_id: int | None = None  # the tracked token (LensConfig.track), when one is set
    tracked_token: str | None = None
    tracked_prob: np.ndarray | None = None  # [L + 1] at the traced position
    tracked_rank: np.ndarray | None = None  # [L + 1]

    @property
    def n_layers(self) -> int:
        return self.top_ids.shape[0] - 1

    def to_json(self) -> dict:
        layers = [{"layer": layer, "positions": [
            {"position": t, "token": self.tokens[t],
             "top": [{"token": self.top_tokens[layer][t][j], "id": int(self.top_ids[layer, t, j]),
                      "prob": float(self.top_probs[layer, t, j])} for j in range(self.top_ids.shape[2])]}
            for t in range(len(self.tokens))]} for layer in range(self.n_layers + 1)]
        final = {"position": self.position, "token": self.predicted_token, "id": self.predicted_id,
                 "prob_by_layer": [float(p) for p in self.predicted_prob],
                 "rank_by_layer": [int(r) for r in self.predicted_rank]}
        tracked = None if self.tracked_id is None else {
            "token": self.tracked_token, "id": self.tracked_id, "prob_by_layer": [float(p) for p in self.tracked_prob],
            "rank_by_layer": [int(r) for r in self.tracked_rank]}
        return {"tokens": list(self.tokens), "layers": layers, "final": final, "tracked": tracked,
                "softcap": self.softcap}


@torch.no_grad()
def compute_lens(model, tokenizer, config: LensConfig, progress: Progress = silent) -> LensResult:
    encoded = encode(model, tokenizer, config.prompt, readout=True)
    position = position_index(config.position, encoded.length)
    tracked = single_token(tokenizer, config.track, "tracked token") if config.track else None
    progress(0.1, "forward pass")
    traced, final = run(model, encoded.ids)
    n_layers = arch_info(model).n_layers
    residuals = [*traced.residual[:n_layers], final]  # hidden_states[-1] is already normed: use the norm's input
    predicted = int(traced.logits[0, position].argmax())
    k = min(config.top_k, int(traced.logits.shape[-1]))
    # Several layers per read-out: one pass over W_U serves them all (it is read from memory once per call, and
    # a call per layer made the lens lm_head-bound); chunks keep the [rows, vocab] logits near 128 MB.
    per_call = max(1, (2 ** 25 // int(traced.logits.shape[-1])) // encoded.length)
    followed = [predicted] + ([] if tracked is None else [tracked])
    top_ids, top_probs, prob, rank = [], [], [], []
    for first in range(0, len(residuals), per_call):
        progress(0.2 + 0.8 * first / len(residuals), f"reading out layers {first}..")
        chunk = torch.stack([r[0].float() for r in residuals[first:first + per_call]])  # [layers, T, d]
        probs = torch.softmax(readout_logits(model, chunk), dim=-1)  # [layers, T, V]
        values, indices = probs.topk(k, dim=-1)
        top_ids.extend(indices.cpu().numpy())
        top_probs.extend(values.float().cpu().numpy())
        at = probs[:, position]  # [layers, V]
        mine = at[:, followed]  # [layers, followed]
        prob.extend(mine.tolist())
        rank.extend((at[:, None, :] > mine[..., None]).sum(-1).tolist())
    ids = np.stack(top_ids).astype(np.int64)
    texts = {int(i): token_text(tokenizer, int(i)) for i in np.unique(ids)}
    prob, rank = np.array(prob, dtype=np.float32), np.array(rank, dtype=np.int64)  # [L + 1, followed]
    progress(1.0, "logit lens done")
    return LensResult(tokens=encoded.tokens, ids=tuple(int(i) for i in encoded.ids[0]), top_ids=ids,
                      top_probs=np.stack(top_probs).astype(np.float32),
                      top_tokens=tuple(tuple(tuple(texts[int(i)] for i in row) for row in layer) for layer in ids),
                      position=position, predicted_id=predicted, predicted_token=token_text(tokenizer, predicted),
                      predicted_prob=prob[:, 0], predicted_rank=rank[:, 0], softcap=softcap(model),
                      tracked_id=tracked, tracked_token=None if tracked is None else token_text(tokenizer, tracked),
                      tracked_prob=None if tracked is None else prob[:, 1],
                      tracked_rank=None if tracked is None else rank[:, 1])
