"""`head_detail`: the drill-down of one head of an L x H map (a click on the page, `mt head` on the CLI).

It reads the stored head map (the page shows it; the CLI computes it first when it is not stored) and replays the
map's prompts. On one of them, at the answer position the map scored (the position that predicts the answer token
chosen by max KL), the head's attention row over the clean prompt and what it writes to the vocabulary there; on
every prompt, its patching effect: the map's own per-prompt score (log p(target) with the head's output replaced
by the map's mean clean value, minus the unpatched corrupted run; their mean is the map's score). For many heads the
patching comes out of one batched run per prompt over every head and the trace captures every layer, so the
drill-downs of all the heads of a map cost about what one costs: `map_head_details` computes them together, right
after the map, and stores each under the key a click on that head reads. A lone click (a map not prepared yet)
patches its own head only (`head_patching`, one forward per prompt), not waiting for the batched run over every
head (issue 54 §1).

What it writes: the head's output as it enters o_proj, times its W_O slice (its o_proj contribution). Gemma 3
normalises the whole attention output (`post_attention_layernorm`) before the residual add: the head's piece goes
through that norm's linear part with the scale of the full attention output at that position. Then the final
norm's linear part with the scale of the full final residual there, and the unembedding: the head's direct
effect on every logit, before Gemma's final soft-capping (TransformerLens' `apply_ln_to_stack` convention).
"""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
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
from backend.mt import head_patching
from backend.mt.head_patching import patch_head
from backend.mt.heads import HEADS_READS, HeadsConfig, find_heads, head_pairs
from backend.mt.patching import patch_scores
from backend.mt.prompts import PromptPair
from backend.params import Config, param
from backend.progress import Progress, scaled, silent
from backend.mt.subject import OnData, model_of
from backend.store import Computed
from backend.store.artifacts import ComputedMany
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


def compute_head_details(handle: ModelHandle, configs: Sequence[HeadDetailConfig], data: ParallelSet,
                         progress: Progress = silent) -> list[HeadDetail]:
    """The drill-downs of several heads of one map in one pass (a single head is a pass of one, so a click and the
    batch that prepares every head of a map give the same numbers): on every prompt, the batched patching of every
    head (`_prompt_patching`, as `compute_head_map` scores them); per example read, one traced forward capturing
    every layer's attention and head outputs."""
    if not configs:
        return []
    model, tok, heads = handle.model, handle.tokenizer, configs[0].heads
    if any(c.heads != heads for c in configs):
        raise ValueError("compute_head_details: every head must belong to the same map")
    for config in configs:
        check_example(config, data)
    head_map = find_heads(handle, heads, data, scaled(progress, 0.0, 0.3)).value  # the page's map: stored
    pairs, _ = head_pairs(heads, data)
    wanted = sorted({(c.layer, c.head) for c in configs})
    patching = _patching(handle, heads, head_map, pairs, wanted, scaled(progress, 0.3, 0.9))
    tgt_ids, src_ids = _language_ids(handle, data, heads.tgt), _language_ids(handle, data, heads.src)
    traces = {e: _trace_example(handle, pairs[e], head_map.answer_offsets[e], heads.max_answer_tokens)
              for e in sorted({c.example for c in configs})}

    def listed(values: torch.Tensor, order: torch.Tensor) -> tuple[VocabEffect, ...]:
        out = []
        for i in order.tolist():
            side = ("both" if i in src_ids else "target") if i in tgt_ids else ("source" if i in src_ids else "")
            out.append(VocabEffect(tok.decode([i]), int(i), float(values[i]), side))
        return tuple(out)

    details = []
    for config in configs:
        layer, head = config.layer, config.head
        trace = traces[config.example]
        pattern = trace.patterns[layer][0, head, -1].float().cpu().numpy()
        raw, piece = head_write(model, trace.head_outputs[layer][0, -1], head, layer)
        effects = residual_vocab_effects(model, piece, trace.final).cpu()
        k = min(config.top_k, effects.shape[0])
        promoted = listed(effects, effects.topk(k).indices)
        details.append(HeadDetail(
            model=handle.display_name, config=config, tokens=trace.tokens, target_token=trace.target_token,
            pattern=pattern, promoted=promoted, suppressed=listed(effects, (-effects).topk(k).indices),
            target_share=sum(e.language == "target" for e in promoted) / k, write_norm=float(raw.norm()),
            rows=head_map.rows, targets=head_map.target_tokens,
            patching=patching[layer, head]))
    progress(1.0, "head drill-downs done")
    return details


PER_HEAD_UP_TO = 4  # heads patched one by one (a forward per prompt each); more share the batched run over every
# head (a traced forward, then per 63 heads a prefill and a 64-row step with logits over the vocabulary)
_HEAD_PATCHED: dict[tuple, tuple[float, ...]] = {}  # (model, map, layer, head) -> per-prompt patching of one head


def _patching(handle: ModelHandle, heads: HeadsConfig, head_map, pairs: list[PromptPair],
              wanted: list[tuple[int, int]], progress: Progress) -> dict[tuple[int, int], tuple[float, ...]]:
    """Per (layer, head) asked for, its patching effect on each prompt: read off the batched run over every head
    when there are many (or it is already done here), else each head patched on its own."""
    if (handle.fingerprint, heads) in _PATCHED or len(wanted) > PER_HEAD_UP_TO:
        per_prompt = _prompt_patching(handle, heads, head_map, pairs, progress)
        return {(layer, head): tuple(float(scores[layer, head]) for scores in per_prompt) for layer, head in wanted}
    out = {}
    for n, (layer, head) in enumerate(wanted):
        key = (handle.fingerprint, heads, layer, head)
        if key not in _HEAD_PATCHED:
            _HEAD_PATCHED[key] = _head_patching(handle, heads, head_map, pairs, layer, head,
                                                scaled(progress, n / len(wanted), (n + 1) / len(wanted)))
        out[layer, head] = _HEAD_PATCHED[key]
    if len(_HEAD_PATCHED) >= 256:
        _HEAD_PATCHED.clear()
    return out


def _corrupted_prefix(handle: ModelHandle, heads: HeadsConfig, head_map, pairs: list[PromptPair],
                      i: int) -> tuple[tuple[int, ...], int]:
    """(prompt i's corrupted prompt up to the map's answer position, the answer token predicted there)"""
    pair = pairs[i]
    answer = encode_answer(handle, pair.answer)[:heads.max_answer_tokens]
    corrupt, j = encode(handle, pair.corrupt), head_map.answer_offsets[i]
    return tuple((corrupt + answer)[:len(corrupt) + j]), answer[j]


def _head_patching(handle: ModelHandle, heads: HeadsConfig, head_map, pairs: list[PromptPair], layer: int,
                   head: int, progress: Progress) -> tuple[float, ...]:
    """One head's per-prompt patching (`patch_head`): what `_prompt_patching` gives it, to float rounding."""
    prefixes = [_corrupted_prefix(handle, heads, head_map, pairs, i) for i in range(len(pairs))]
    return patch_head(handle.model, head_map, prefixes, layer, head, progress)


_PATCHED: dict[tuple, tuple[np.ndarray, ...]] = {}  # (model, map) -> per-prompt patching: a click on another
# prompt of a map already patched here (the drill-down's prompt choice) costs its one traced forward, not the patching


def _prompt_patching(handle: ModelHandle, heads: HeadsConfig, head_map, pairs: list[PromptPair],
                     progress: Progress) -> tuple[np.ndarray, ...]:
    """Per prompt, `[layers, heads]` log p(target) gained by patching each head's mean clean output in at the map's
    chosen position of the corrupted prompt (`patch_scores`, every head in one batched run): the map's own
    per-prompt scores, their mean its score (to float rounding: the corrupted prefix is traced on its own here)."""
    key = (handle.fingerprint, heads)
    if key not in _PATCHED:
        model, n_layers = handle.model, handle.info.n_layers
        mean_clean = torch.from_numpy(head_map.mean_clean)  # the value the map patches in
        scores = []
        for i in range(len(pairs)):
            prefix, target = _corrupted_prefix(handle, heads, head_map, pairs, i)
            traced = capture(model, torch.tensor([prefix], device=handle.device), heads=range(n_layers))
            corrupted = torch.stack([traced.head_outputs[layer][0, -1] for layer in range(n_layers)]).float().cpu()
            scores.append(patch_scores(model, prefix, target, mean_clean - corrupted, heads.rows_per_batch))
            progress((i + 1) / len(pairs), f"patching prompt {i + 1}/{len(pairs)}")
        if len(_PATCHED) >= 32:
            _PATCHED.clear()
        _PATCHED[key] = tuple(scores)
    return _PATCHED[key]


@dataclass(frozen=True)
class _Trace:
    """One example's clean prompt up to the answer position, traced: every layer's patterns `[1, heads, T, T]` and
    head outputs `[1, T, heads, head_dim]`, the final residual at the last position `[hidden]`."""

    tokens: tuple[str, ...]
    target_token: str
    patterns: dict[int, torch.Tensor]
    head_outputs: dict[int, torch.Tensor]
    final: torch.Tensor


@torch.no_grad()
def _trace_example(handle: ModelHandle, pair: PromptPair, offset: int, max_answer_tokens: int) -> _Trace:
    # every layer, whichever heads are asked for: a head's numbers never depend on which others share the pass
    answer = encode_answer(handle, pair.answer)[:max_answer_tokens]
    clean = encode(handle, pair.clean)
    prefix = (clean + answer)[:len(clean) + offset]
    layers = range(handle.info.n_layers)
    with capture_final_residual(handle.model) as captured:
        traced = capture(handle.model, torch.tensor([prefix], device=handle.device), heads=layers,
                         pattern_layers=layers)
    tok = handle.tokenizer
    return _Trace(tokens=tuple(tok.decode([i]) for i in prefix), target_token=tok.decode([answer[offset]]),
                  patterns=traced.patterns, head_outputs=traced.head_outputs, final=captured[-1][0, -1])


def compute_head_detail(handle: ModelHandle, config: HeadDetailConfig, data: ParallelSet,
                        progress: Progress = silent) -> HeadDetail:
    return compute_head_details(handle, [config], data, progress)[0]


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
                          reads=(sys.modules[__name__], head_patching, *HEADS_READS), ref=model_of))


def head_detail(handle: ModelHandle, config: HeadDetailConfig, data: ParallelSet | None = None,
                progress: Progress = silent) -> Computed[HeadDetail]:
    """Cached drill-down of one head of the map `config.heads` on `data` (default: the built-in set)."""
    data = data or builtin()
    check_example(config, data)
    check_head(handle.model, config.layer, config.head)
    config = dataclasses.replace(config, heads=dataclasses.replace(config.heads, dataset=data.digest))
    return head_verb(OnData(handle, data), config, progress)


def map_head_details(handle: ModelHandle, heads: HeadsConfig, data: ParallelSet | None = None, example: int = 0,
                     progress: Progress = silent) -> ComputedMany[HeadDetail]:
    """The drill-down of every head of the map `heads`, read on prompt `example`, each stored under the key a click
    on that head asks for (`head_detail`, default settings): one store read when they are stored, else the missing
    ones computed together in one pass (`compute_head_details`) and stored."""
    data = data or builtin()
    heads = dataclasses.replace(heads, dataset=data.digest)
    info = handle.info
    configs = [HeadDetailConfig(heads=heads, layer=layer, head=head, example=example)
               for layer in range(info.n_layers) for head in range(info.n_heads)]
    check_example(configs[0], data)
    return head_verb.many(OnData(handle, data), configs,
                          lambda missing: compute_head_details(handle, missing, data, progress))
