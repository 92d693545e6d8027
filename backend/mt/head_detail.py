"""`head_detail`: the drill-down of one head of an L x H map (a click on the page, `mt head` on the CLI).

It reads the stored head map (the page shows it; the CLI computes it first when it is not stored) and replays the
map's prompts. On one of them, at the answer position the map scored (the position that predicts the answer token
chosen by max KL), the head's attention row over the clean prompt and what it writes to the vocabulary there; on
every prompt, its patching effect: log p(target) with the head's output replaced by the map's mean clean value,
minus the stored corrupted log p (the map's score is their mean). One forward per prompt plus one traced forward.

What it writes: the head's output as it enters o_proj, times its W_O slice (its o_proj contribution). Gemma 3
normalises the whole attention output (`post_attention_layernorm`) before the residual add: the head's piece goes
through that norm's linear part with the scale of the full attention output at that position. Then the final
norm's linear part with the scale of the full final residual there, and the unembedding: the head's direct
effect on every logit, before Gemma's final soft-capping (TransformerLens' `apply_ln_to_stack` convention).
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import UserError
from backend.models.architecture import arch_info, final_norm, post_attention_norm
from backend.models.hooks import capture
from backend.models.loading import ModelHandle
from backend.models.readout import capture_final_residual, norm_parts, out_proj, unembedding
from backend.mt.data import ParallelSet, builtin
from backend.mt.examples import encode, encode_answer
from backend.mt.heads import HEADS_READS, HeadsConfig, find_heads, head_pairs
from backend.mt.patching import patch_one
from backend.params import Config, param
from backend.progress import Progress, scaled, silent
from backend.mt.subject import OnData, model_of
from backend.store import Computed
from backend.verbs import Verb, register


@dataclass(frozen=True)
class HeadDetailConfig(Config):
    """One head of one map. `heads` is the map's own config (its prompts are the ones read here)."""

    heads: HeadsConfig = param(HeadsConfig(), "the head map the head belongs to")
    layer: int = param(0, "layer of the head", ge=0)
    head: int = param(0, "query head within the layer", ge=0)
    example: int = param(0, "which of the map's prompts the pattern and the vocabulary projection are read on",
                         ge=0)
    top_k: int = param(10, "promoted and suppressed tokens listed", ge=1, le=100)


@dataclass(frozen=True)
class VocabEffect:
    token: str
    id: int
    logit: float  # the head's direct contribution to this token's logit
    language: str  # "target" / "source" / "both": the token occurs in the data set's sentences of that side; ""


@dataclass(frozen=True)
class HeadDetail:
    """tokens `[T]` of the example's clean prompt up to the answer position (the last one); pattern `[T]` the
    head's attention from that position; patching `[n prompts]` nats, as the map scores it per prompt."""

    model: str
    config: HeadDetailConfig
    tokens: tuple[str, ...]
    target_token: str  # the answer token predicted at the position
    pattern: np.ndarray
    promoted: tuple[VocabEffect, ...]
    suppressed: tuple[VocabEffect, ...]
    target_share: float  # share of the promoted tokens that are target-language tokens
    write_norm: float  # |the head's o_proj contribution| at the position
    rows: tuple[int, ...]
    targets: tuple[str, ...]
    patching: tuple[float, ...]

    @property
    def mean_patching(self) -> float:
        return float(np.mean(self.patching))

    def to_json(self) -> dict:
        effects = lambda items: [dataclasses.asdict(e) for e in items]  # noqa: E731
        return {"model": self.model, "layer": self.config.layer, "head": self.config.head,
                "head_type": self.config.heads.head_type, "pair": f"{self.config.heads.src}-{self.config.heads.tgt}",
                "example": self.config.example, "tokens": list(self.tokens), "target_token": self.target_token,
                "pattern": [round(float(x), 5) for x in self.pattern], "promoted": effects(self.promoted),
                "suppressed": effects(self.suppressed), "target_share": self.target_share,
                "write_norm": self.write_norm,
                "patching": [{"row": r, "target": t, "score": s} for r, t, s in zip(self.rows, self.targets,
                                                                                    self.patching)],
                "mean_patching": self.mean_patching}


def check_head(model, layer: int, head: int) -> None:
    info = arch_info(model)
    if not 0 <= layer < info.n_layers:
        raise UserError(f"Layer {layer} does not exist: the model has layers 0-{info.n_layers - 1}.")
    if not 0 <= head < info.n_heads:
        raise UserError(f"Head {head} does not exist: each layer has heads 0-{info.n_heads - 1}.")


@torch.no_grad()
def head_write(model, z: torch.Tensor, head: int, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(the head's o_proj contribution `[hidden]`, that piece as it reaches the residual stream `[hidden]`) at a
    position whose per-head outputs are `z [heads, head_dim]` (all heads: a post-norm's scale is the whole
    attention output's)."""
    w_o, b_o = out_proj(model, layer)  # [d, H * dh]
    writes = torch.einsum("dhk,hk->hd", w_o.reshape(w_o.shape[0], z.shape[0], -1), z.float())
    piece = writes[head]
    post = post_attention_norm(model, layer)
    if post is None:
        return piece, piece
    parts = norm_parts(post)  # Gemma 3: the norm's linear part, scaled by the full attention output
    return piece, parts.linear(piece, parts.scale(writes.sum(0) + (0.0 if b_o is None else b_o)))


@torch.no_grad()
def residual_vocab_effects(model, piece: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
    """`[vocab]` direct logit effects of a residual piece `[hidden]`: the final norm's linear part with the scale
    of the full final residual `final [hidden]` at that position, then the unembedding (no bias, no soft-cap)."""
    last = norm_parts(final_norm(model))
    w_u, _ = unembedding(model)
    return w_u @ last.linear(piece, last.scale(final.float()))


def _language_ids(handle: ModelHandle, data: ParallelSet, lang: str) -> set[int]:
    return {i for r in range(len(data)) for i in encode_answer(handle, " " + data.text(lang, r))}


def compute_head_detail(handle: ModelHandle, config: HeadDetailConfig, data: ParallelSet,
                        progress: Progress = silent) -> HeadDetail:
    model, tok, heads = handle.model, handle.tokenizer, config.heads
    head_map = find_heads(handle, heads, data, scaled(progress, 0.0, 0.5)).value  # the page's map: stored
    pairs, _ = head_pairs(heads, data)
    check_example(config, data)
    layer, head = config.layer, config.head
    mean_clean = torch.from_numpy(head_map.mean_clean[layer, head])  # the value the map patches in
    scores = []
    for i, pair in enumerate(pairs):
        # the map's corrupted prefix ends before its chosen answer token; its log p there is stored with the map
        answer = encode_answer(handle, pair.answer)[:heads.max_answer_tokens]
        corrupt, j = encode(handle, pair.corrupt), head_map.answer_offsets[i]
        prefix = tuple((corrupt + answer)[:len(corrupt) + j])
        scores.append(patch_one(model, prefix, answer[j], layer, head, mean_clean) - head_map.corrupt_logp[i])
        progress(0.5 + 0.4 * (i + 1) / len(pairs), f"patching prompt {i + 1}/{len(pairs)}")
    pair, j = pairs[config.example], head_map.answer_offsets[config.example]
    answer = encode_answer(handle, pair.answer)[:heads.max_answer_tokens]
    clean = encode(handle, pair.clean)
    prefix = (clean + answer)[:len(clean) + j]
    ids = torch.tensor([prefix], device=handle.device)
    with capture_final_residual(model) as captured:
        traced = capture(model, ids, heads=[layer], pattern_layers=(layer,))
    pattern = traced.patterns[layer][0, head, -1].float().cpu().numpy()
    raw, piece = head_write(model, traced.head_outputs[layer][0, -1], head, layer)
    effects = residual_vocab_effects(model, piece, captured[-1][0, -1]).cpu()
    tgt_ids, src_ids = _language_ids(handle, data, heads.tgt), _language_ids(handle, data, heads.src)

    def listed(values: torch.Tensor, order: torch.Tensor) -> tuple[VocabEffect, ...]:
        out = []
        for i in order.tolist():
            side = ("both" if i in src_ids else "target") if i in tgt_ids else ("source" if i in src_ids else "")
            out.append(VocabEffect(tok.decode([i]), int(i), float(values[i]), side))
        return tuple(out)

    k = min(config.top_k, effects.shape[0])
    promoted = listed(effects, effects.topk(k).indices)
    progress(1.0, "head drill-down done")
    return HeadDetail(model=handle.display_name, config=config, tokens=tuple(tok.decode([i]) for i in prefix),
                      target_token=tok.decode([answer[j]]), pattern=pattern, promoted=promoted,
                      suppressed=listed(effects, (-effects).topk(k).indices),
                      target_share=sum(e.language == "target" for e in promoted) / k, write_norm=float(raw.norm()),
                      rows=head_map.rows, targets=head_map.target_tokens, patching=tuple(float(s) for s in scores))


def check_example(config: HeadDetailConfig, data: ParallelSet) -> None:
    """Refuse an example index the map lacks, from the map's prompts alone (no model): before any work, not after
    the whole map is computed (issue 55: `--example 100000` refused after 180 s and 3.6 GB)."""
    data.check_pair(config.heads.src, config.heads.tgt)
    n = len(head_pairs(config.heads, data)[0])
    if not config.example < n:
        raise UserError(f"Prompt {config.example} does not exist: the map has prompts 0-{n - 1}.")


def _head_detail_on(subject: OnData, config: HeadDetailConfig, progress: Progress) -> HeadDetail:
    return compute_head_detail(subject.handle, config, subject.data, progress)


# One head replayed on its map's own prompts, beside the stored map: it reads the map's code too.
head_verb = register(Verb("mt", "head", HeadDetailConfig, _head_detail_on, "one head of a map: attention row, "
                          "what it writes to the vocabulary, its patching effect per prompt",
                          reads=(sys.modules[__name__], *HEADS_READS), ref=model_of))


def head_detail(handle: ModelHandle, config: HeadDetailConfig, data: ParallelSet | None = None,
                progress: Progress = silent) -> Computed[HeadDetail]:
    """Cached drill-down of one head of the map `config.heads` on `data` (default: the built-in set)."""
    data = data or builtin()
    check_example(config, data)
    check_head(handle.model, config.layer, config.head)
    config = dataclasses.replace(config, heads=dataclasses.replace(config.heads, dataset=data.digest))
    return head_verb(OnData(handle, data), config, progress)
