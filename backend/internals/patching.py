"""Activation patching (clean -> corrupted): run the corrupted prompt with one site taken from the clean run, and
measure how much of the clean behaviour comes back.

    value = (patched diff - corrupted diff) / (clean diff - corrupted diff),   diff = logit[target] - logit[contrast]

so the corrupted run is 0 and the clean run is 1 (TransformerLens' convention in its patching demos; causal tracing,
Meng et al. 2022; the IOI circuit, Wang et al. 2022). Logits are the model's output at the final position (after
any soft-capping).

Batched: the clean activations are read once; every patched run is one row of a batch of corrupted copies, each
row with its own patch (backend.models.sites.RowPatch). A patch at position p changes nothing before p, so the rows
patched at p share the corrupted prompt's first p tokens as a prefilled cache (the kernel's decoder) and run only
positions p.. (and only the final position is read out to the vocabulary). TransformerLens runs one whole forward
per patch.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import UserError
from backend.internals.intervene_config import PatchConfig
from backend.internals.prompt import encode, single_token, token_text
from backend.models.architecture import arch_info
from backend.models.kernel import start, start_shared_prefix
from backend.models.sites import RowPatch, intervened
from backend.progress import Progress, silent

ROW_TOKENS = 2 ** 13  # rows x positions per forward: bounds activation memory
LOGIT_FLOATS = 2 ** 25  # rows x vocabulary per forward: bounds the read-out (Gemma's vocabulary is 262k)
Unit = tuple[int, int | None, int | None]  # (layer, head or None, position or None)


@dataclass(frozen=True)
class PatchResult:
    """values: `[L, T]` (resid_pre, attn_out, mlp_out), `[L, H]` (head) or `[L, H, T]` (head_pos); top_ids and
    top_probs: the patched run's top-k at the final position, values' shape + `[k]`."""

    site: str
    tokens: tuple[str, ...]
    corrupted_tokens: tuple[str, ...]
    target_id: int
    target_token: str
    contrast_id: int
    contrast_token: str
    clean_logit_diff: float
    corrupted_logit_diff: float
    values: np.ndarray
    top_ids: np.ndarray
    top_probs: np.ndarray
    clean_top: tuple[tuple[str, float], ...]  # (token, probability) at the final position
    corrupted_top: tuple[tuple[str, float], ...]
    texts: dict[int, str]  # token id -> text for every id in top_ids

    def top_at(self, index: tuple[int, ...]) -> tuple[tuple[str, float], ...]:
        """The patched run's top-k at one cell of `values`."""
        return tuple((self.texts[int(i)], float(p)) for i, p in zip(self.top_ids[index], self.top_probs[index]))

    def to_json(self) -> dict:
        listed = lambda top: [{"token": t, "prob": p} for t, p in top]  # noqa: E731
        return {"site": self.site, "tokens": list(self.tokens), "corrupted_tokens": list(self.corrupted_tokens),
                "target": {"token": self.target_token, "id": self.target_id},
                "contrast": {"token": self.contrast_token, "id": self.contrast_id},
                "clean_logit_diff": self.clean_logit_diff, "corrupted_logit_diff": self.corrupted_logit_diff,
                "values": self.values.tolist(), "clean_top": listed(self.clean_top),
                "corrupted_top": listed(self.corrupted_top)}


def units_of(site: str, n_layers: int, n_heads: int, length: int) -> tuple[list[Unit], tuple[int, ...]]:
    """Every patch a site asks for, in row-major order of the values' shape, and that shape."""
    layers, heads, positions = range(n_layers), range(n_heads), range(length)
    if site == "head":
        return [(l, h, None) for l in layers for h in heads], (n_layers, n_heads)
    if site == "head_pos":
        return [(l, h, p) for l in layers for h in heads for p in positions], (n_layers, n_heads, length)
    return [(l, None, p) for l in layers for p in positions], (n_layers, length)


def cell_name(site: str, cell: tuple[int, ...]) -> str:
    """"L3 pos5", "L3H2" or "L3H2 pos5" for one index of a site's values."""
    if site in ("head", "head_pos"):
        return f"L{cell[0]}H{cell[1]}" + (f" pos{cell[2]}" if len(cell) > 2 else "")
    return f"L{cell[0]} pos{cell[1]}"


def hook_site(site: str) -> str:
    return "head" if site == "head_pos" else site


def read_clean(model, ids: torch.Tensor, site: str) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """(final-position logits `[V]`, the site's activation per layer `[T, ...]`) of one unpatched run."""
    n_layers, n_heads = arch_info(model).n_layers, arch_info(model).n_heads
    with intervened(model, reads=[(hook_site(site), layer) for layer in range(n_layers)]) as seen:
        logits = start(model, ids).logits[0]
    acts = [seen[(hook_site(site), layer)][0][0] for layer in range(n_layers)]
    if hook_site(site) == "head":
        acts = [a.view(a.shape[0], n_heads, -1) for a in acts]
    return logits, acts


def patched_runs(model, corrupted: torch.Tensor, site: str, units: list[Unit], clean: list[torch.Tensor],
                 target: int, contrast: int, k: int, progress: Progress = silent
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The corrupted prompt `[1, T]` with each unit patched from `clean` (read_clean's activations), batched as the
    module docstring says: (logit differences `[n]` float64, top-k ids `[n, k]`, top-k probabilities `[n, k]`) at
    the final position, n = len(units)."""
    length, vocab = corrupted.shape[1], model.config.vocab_size
    by_start: dict[int, list[int]] = defaultdict(list)
    for i, (_, _, position) in enumerate(units):
        by_start[0 if position is None else position].append(i)
    diffs, ids, probs = torch.empty(len(units), dtype=torch.float64), torch.empty(len(units), k, dtype=torch.long), \
        torch.empty(len(units), k)
    done = 0
    for first, members in sorted(by_start.items()):
        per_forward = max(1, min(ROW_TOKENS // (length - first), LOGIT_FLOATS // vocab))
        for offset in range(0, len(members), per_forward):
            chunk = members[offset:offset + per_forward]
            logits = _run_chunk(model, corrupted, first, [units[i] for i in chunk], site, clean).float().cpu()
            top = torch.softmax(logits, dim=-1).topk(k)
            diffs[chunk], ids[chunk], probs[chunk] = logit_diff(logits, target, contrast), top.indices, top.values
            done += len(chunk)
            progress(done / len(units), f"patched {done} of {len(units)} runs")
    return diffs, ids, probs


def _run_chunk(model, corrupted: torch.Tensor, first: int, units: list[Unit], site: str,
               clean: list[torch.Tensor]) -> torch.Tensor:
    """One forward of len(units) corrupted rows from position `first` on (its prefix prefilled once)."""
    rows = len(units)
    edits = []
    by_layer: dict[int, list[int]] = defaultdict(list)
    for row, (layer, _, _) in enumerate(units):
        by_layer[layer].append(row)
    device = corrupted.device
    for layer, members in by_layer.items():
        heads = [units[r][1] for r in members]
        per_position = units[members[0]][2] is not None
        act = clean[layer]  # [T, width] or [T, H, head_dim]
        if site in ("head", "head_pos"):
            values = act[first].index_select(0, torch.tensor(heads)) if per_position else act.permute(1, 0, 2)[heads]
        else:
            values = act[first].expand(len(members), -1) if per_position else act.expand(len(members), -1, -1)
        edits.append(RowPatch(site=hook_site(site), layer=layer, rows=torch.tensor(members, device=device),
                              values=values, positions=torch.zeros(len(members), dtype=torch.long, device=device)
                              if per_position else None,
                              heads=None if heads[0] is None else torch.tensor(heads, device=device)))
    return start_shared_prefix(model, corrupted, rows, first, lambda: intervened(model, edits)).logits


def logit_diff(logits: torch.Tensor, target: int, contrast: int) -> torch.Tensor:
    return logits[..., target].double() - logits[..., contrast].double()


def _top(tokenizer, logits: torch.Tensor, k: int) -> tuple[tuple[str, float], ...]:
    top = torch.softmax(logits.float(), dim=-1).topk(k)
    return tuple((token_text(tokenizer, int(i)), float(p)) for i, p in zip(top.indices, top.values))


@torch.no_grad()
def compute_patch(model, tokenizer, config: PatchConfig, progress: Progress = silent) -> PatchResult:
    clean_ids, corrupted_ids = encode(model, tokenizer, config.clean), encode(model, tokenizer, config.corrupted)
    if clean_ids.length != corrupted_ids.length:
        raise UserError(f"The clean prompt is {clean_ids.length} tokens and the corrupted one {corrupted_ids.length}; "
                        "patching needs the same length (change a word for one of the same token count).")
    target = single_token(tokenizer, config.target, "target token") if config.target else None
    contrast = single_token(tokenizer, config.contrast, "contrast token") if config.contrast else None
    progress(0.02, "clean and corrupted runs")
    clean_logits, clean_acts = read_clean(model, clean_ids.ids, config.site)
    corrupted_logits = start(model, corrupted_ids.ids).logits[0]
    target = int(clean_logits.argmax()) if target is None else target
    contrast = int(corrupted_logits.argmax()) if contrast is None else contrast
    if target == contrast:
        raise UserError(f"The target and the contrast are the same token ({token_text(tokenizer, target)!r}): give a "
                        "contrast the corrupted prompt prefers.")
    clean_diff, corrupted_diff = (float(logit_diff(x, target, contrast)) for x in (clean_logits, corrupted_logits))
    if abs(clean_diff - corrupted_diff) < 1e-6:
        raise UserError("The clean and corrupted prompts give the same logit difference; pick a target and contrast "
                        "they disagree on.")
    info = arch_info(model)
    units, shape = units_of(config.site, info.n_layers, info.n_heads, clean_ids.length)
    k = min(config.top_k, int(clean_logits.shape[-1]))
    diffs, top_ids, top_probs = patched_runs(model, corrupted_ids.ids, config.site, units, clean_acts, target,
                                             contrast, k, lambda f, m: progress(0.05 + 0.93 * f, m))
    values = (diffs - corrupted_diff) / (clean_diff - corrupted_diff)
    top_ids = top_ids.numpy().astype(np.int64).reshape(*shape, k)
    progress(1.0, "patching done")
    return PatchResult(site=config.site, tokens=clean_ids.tokens, corrupted_tokens=corrupted_ids.tokens,
                       target_id=target, target_token=token_text(tokenizer, target), contrast_id=contrast,
                       contrast_token=token_text(tokenizer, contrast), clean_logit_diff=clean_diff,
                       corrupted_logit_diff=corrupted_diff, values=values.numpy().astype(np.float32).reshape(shape),
                       top_ids=top_ids, top_probs=top_probs.numpy().astype(np.float32).reshape(*shape, k),
                       clean_top=_top(tokenizer, clean_logits, k), corrupted_top=_top(tokenizer, corrupted_logits, k),
                       texts={int(i): token_text(tokenizer, int(i)) for i in np.unique(top_ids)})
