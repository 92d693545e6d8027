"""Drill-down of one attention head: its bounds beside the distribution of its observed logits.

The parent is the cached `bounds` result of the same BoundsConfig; the head's logits S_ij (causal pairs the layer
computes, every sample text of that config) are recomputed by the same code that gave the parent's observed
maximum (`layer_logits`), so the histogram's largest |S| is the parent's `observed[layer, head]`.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from backend.errors import UserError
from backend.fp8.bounds import BOUNDS_READS, BoundsConfig, bounds
from backend.fp8.observed import computed_pairs, encode_samples, layer_logits
from backend.models.hooks import capture
from backend.params import Config, param
from backend.progress import Progress, scaled, silent
from backend.store import Computed
from backend.store.artifacts import ComputedMany
from backend.verbs import Verb, register


@dataclass(frozen=True)
class HeadConfig(Config):
    """One (layer, head) of the bounds computed with `bounds`; ranges are checked against the model."""

    layer: int = param(0, "layer of the head")
    head: int = param(0, "query head (GQA: its kv head is head // group size)")
    bounds: BoundsConfig = BoundsConfig()
    bins: int = param(60, "histogram bins over the observed logits", ge=2, le=1000)


@dataclass(frozen=True)
class HeadResult:
    """One head: bounds (logit units) and the histogram of its observed logits S_ij on the sample texts."""

    model: str
    layer: int
    head: int
    kv_head: int
    sigma: float
    bound: float  # the guaranteed bound (rotation-safe with RoPE, else rank-aware)
    bound_rank_aware: float
    bound_rotation_safe: float
    layer_bound: float  # max over the layer's heads: what the layer's FP8 scale is set from
    fp8_max: float
    fp8_format: str
    counts: np.ndarray  # [bins] logits per bin
    edges: np.ndarray  # [bins + 1] bin edges (logits)
    n_logits: int  # causal pairs over all sample texts
    observed_max: float  # max |S_ij| (nan without sample texts)
    observed_min: float  # min S_ij (signed)
    observed_top: float  # max S_ij (signed)
    mean: float
    std: float
    q99_abs: float  # 99th percentile of |S_ij|

    @property
    def utilisation(self) -> float:
        return self.observed_max / self.bound

    def summary(self) -> dict:
        num = lambda x: float(x) if np.isfinite(x) else None  # noqa: E731
        return {"model": self.model, "layer": self.layer, "head": self.head, "kv_head": self.kv_head,
                "sigma": self.sigma, "bound": self.bound, "bound_rank_aware": self.bound_rank_aware,
                "bound_rotation_safe": self.bound_rotation_safe, "layer_bound": self.layer_bound,
                "fp8_format": self.fp8_format, "fp8_max": self.fp8_max, "n_logits": self.n_logits,
                "observed_max_abs": num(self.observed_max), "observed_min": num(self.observed_min),
                "observed_max": num(self.observed_top), "mean": num(self.mean), "std": num(self.std),
                "q99_abs": num(self.q99_abs), "utilisation": num(self.utilisation),
                "histogram": {"counts": self.counts.astype(int).tolist(), "edges": self.edges.tolist()}}


def check_head(n_layers: int, n_heads: int, layer: int, head: int) -> None:
    if not 0 <= layer < n_layers:
        raise UserError(f"Layer {layer} is out of range (the model has layers 0 to {n_layers - 1}).")
    if not 0 <= head < n_heads:
        raise UserError(f"Head {head} is out of range (the model has heads 0 to {n_heads - 1} per layer).")


@torch.no_grad()
def heads_logits(handle, heads: Iterable[tuple[int, int]], n_texts: int, max_tokens: int
                 ) -> dict[tuple[int, int], np.ndarray]:
    """Each (layer, head)'s logits on the causal pairs its layer computes, all sample texts, flattened fp32: one
    forward per text and one logit computation per layer, however many heads are asked for."""
    model, wanted = handle.model, sorted(set(heads))
    layers = sorted({layer for layer, _ in wanted})
    out: dict[tuple[int, int], list[np.ndarray]] = {pair: [] for pair in wanted}
    for ids in encode_samples(model, handle.tokenizer, n_texts, max_tokens):
        residual = capture(model, ids.to(next(model.parameters()).device)).residual
        for layer in layers:
            scores = layer_logits(model, layer, residual[layer])[0]
            kept = computed_pairs(model, layer, scores.shape[-1], scores.device)
            for pair in (p for p in wanted if p[0] == layer):
                out[pair].append(scores[pair[1]][kept].float().cpu().numpy())
    return {pair: np.concatenate(chunks) for pair, chunks in out.items()}


def compute_head(handle, config: HeadConfig, progress: Progress = silent) -> HeadResult:
    return compute_heads(handle, [config], progress)[0]


def compute_heads(handle, configs: Sequence[HeadConfig], progress: Progress = silent) -> list[HeadResult]:
    """Every config's head drill-down, in order: the parent bounds once per distinct BoundsConfig (cached) and the
    sample texts' forwards once for all its heads (`heads_logits`), so every head of a heatmap costs what one did."""
    info = handle.info
    for config in configs:
        check_head(info.n_layers, info.n_heads, config.layer, config.head)
    groups: dict[BoundsConfig, list[int]] = {}
    for i, config in enumerate(configs):
        groups.setdefault(config.bounds, []).append(i)
    results: list[HeadResult | None] = [None] * len(configs)
    for done, (bounds_config, indices) in enumerate(groups.items()):
        start, end = done / len(groups), (done + 1) / len(groups)
        parent = bounds(handle, bounds_config, scaled(progress, start, start + 0.7 * (end - start))).value
        heads = {(configs[i].layer, configs[i].head) for i in indices}
        progress(start + 0.7 * (end - start), f"logits of {len(heads)} head(s) on the sample texts")
        values = (heads_logits(handle, heads, bounds_config.n_texts, bounds_config.max_tokens)
                  if bounds_config.n_texts else {})
        for i in indices:
            results[i] = _head_result(info, parent, configs[i], values.get((configs[i].layer, configs[i].head)))
    progress(1.0, "head done" if len(configs) == 1 else f"{len(configs)} heads done")
    return results


def _head_result(info, parent, config: HeadConfig, values: np.ndarray | None) -> HeadResult:
    l, h = config.layer, config.head
    values = np.zeros(0, dtype=np.float32) if values is None else values
    nan = float("nan")
    if values.size:
        counts, edges = np.histogram(values, bins=config.bins)
        absolute = np.abs(values)
        stats = (float(absolute.max()), float(values.min()), float(values.max()), float(values.mean()),
                 float(values.std()), float(np.quantile(absolute, 0.99)))
    else:
        counts, edges, stats = np.zeros(0, dtype=np.int64), np.zeros(0), (nan,) * 6
    group = info.n_heads // info.n_kv_heads
    return HeadResult(model=parent.model, layer=l, head=h, kv_head=h // group, sigma=float(parent.sigma[l, h]),
                      bound=float(parent.bound[l, h]), bound_rank_aware=float(parent.bound_rank_aware[l, h]),
                      bound_rotation_safe=float(parent.bound_rotation_safe[l, h]),
                      layer_bound=float(parent.layer_bound[l]), fp8_max=parent.fp8_max,
                      fp8_format=parent.fp8_format, counts=counts.astype(np.int64), edges=edges.astype(np.float64),
                      n_logits=int(values.size), observed_max=stats[0], observed_min=stats[1], observed_top=stats[2],
                      mean=stats[3], std=stats[4], q99_abs=stats[5])


# The head's logits are recomputed by the bounds' own code (observed.py), beside the stored bounds: it reads them.
head_verb = register(Verb("fp8", "head", HeadConfig, compute_head, "one head's bounds and the histogram of its "
                          "observed logits (the FP8 page's drill-down)", reads=(sys.modules[__name__], *BOUNDS_READS)))


def head(handle, config: HeadConfig, progress: Progress = silent) -> Computed[HeadResult]:
    """Cached: one head's bounds and the histogram of its observed logits (the FP8 page's drill-down)."""
    check_head(handle.info.n_layers, handle.info.n_heads, config.layer, config.head)  # before any lookup
    return head_verb(handle, config, progress)


def store_heads(handle, configs: Sequence[HeadConfig], progress: Progress = silent) -> ComputedMany[HeadResult]:
    """Many heads' drill-downs (every head of a heatmap) computed in one pass and stored, each under the key its
    click reads; those already stored are read, not computed."""
    for config in configs:
        check_head(handle.info.n_layers, handle.info.n_heads, config.layer, config.head)
    return head_verb.many(handle, list(configs), lambda missing: compute_heads(handle, missing, progress))
