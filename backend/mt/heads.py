"""`find_heads`: L x H maps of language or translation heads, by activation patching and by a gradient
attribution, with the mean clean head outputs that steering vectors are built from."""
from __future__ import annotations

import dataclasses
import random
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch

from backend.models.loading import ModelHandle
import backend.mt.attribution as attribution
import backend.mt.data as data_module
import backend.mt.examples as examples_module
import backend.mt.fields as fields
import backend.mt.patching as patching
import backend.mt.prompts as prompts
import backend.mt.selection as selection
from backend.mt.attribution import ATTRIBUTIONS, attribute, rank_correlation
from backend.mt.data import ParallelSet, builtin
from backend.mt.examples import Example, build_example
from backend.mt.patching import patch_scores
from backend.mt.prompts import HEAD_TYPES, PromptPair, corrupt_language, prompt_pair
from backend.mt.selection import Head, top_heads, top_k_overlap
from backend.params import Config, param
from backend.progress import Progress, scaled, silent
from backend.mt.subject import OnData, model_of
from backend.store import Computed
from backend.verbs import Verb, register


@dataclass(frozen=True)
class HeadsConfig(Config):
    """Everything a head map depends on (the cache key). `dataset` is the data set's digest (set by find_heads)."""

    src: str = fields.src()
    tgt: str = fields.tgt()
    head_type: str = param("language", "which heads: each head type corrupts the demonstrations its own way",
                           choices=HEAD_TYPES)
    n_prompts: int = param(8, "head-finding prompts from the 'heads' split", ge=1, le=64)
    k_shots: int = fields.k_shots()
    corrupt_language: str = param("", "language heads: replacement language ('' = first other language of the set)")
    attribution: str = param("attribution-patching", "gradient approximation of the patching map",
                             choices=ATTRIBUTIONS)
    ig_steps: int = param(8, "integrated-gradients steps", ge=1)
    max_answer_tokens: int = param(16, "answer tokens teacher-forced to choose the position", ge=1)
    rows_per_batch: int = param(136, "patched heads per single-token step (the KV cache is copied per row: memory)",
                                ge=1)
    seed: int = fields.seed()
    dataset: str = fields.dataset()


@dataclass(frozen=True)
class HeadMap:
    """Head scores for one head type. Maps are `[layers, heads]`, mean increase of log p(target) in nats."""

    model: str
    config: HeadsConfig
    patching: np.ndarray
    attribution: np.ndarray
    rank_correlation: float  # Spearman, patching vs attribution over all L*H heads
    mean_clean: np.ndarray  # `[layers, heads, head_dim]` mean clean head output at the chosen position
    rows: tuple[int, ...]  # data rows of the prompts
    answer_offsets: tuple[int, ...]  # chosen answer position per prompt
    target_tokens: tuple[str, ...]
    kl: tuple[float, ...]  # KL(clean || corrupt) at the chosen position, nats
    clean_logp: tuple[float, ...]
    corrupt_logp: tuple[float, ...]
    other_language: str
    patch_seconds: float
    attribution_seconds: float

    def selected(self, percent: float) -> tuple[Head, ...]:
        return top_heads(self.patching, percent)

    def agreement(self, percent: float) -> float:
        """Share of the top-percent patching heads that the attribution also ranks in its top-percent."""
        return top_k_overlap(self.patching, self.attribution, percent)

    def table(self, limit: int = 20) -> list[dict]:
        """The best heads by patching score with their attribution scores and ranks."""
        flat_attr = self.attribution.ravel()
        attr_rank = {int(i): r + 1 for r, i in enumerate(np.argsort(-flat_attr, kind="stable"))}
        rows = []
        for rank, (layer, head) in enumerate(top_heads(self.patching, 5.0)[:limit], 1):
            i = layer * self.patching.shape[1] + head
            rows.append({"rank": rank, "layer": layer, "head": head, "patching": float(self.patching[layer, head]),
                         "attribution": float(flat_attr[i]), "attribution_rank": attr_rank[i]})
        return rows


def head_pairs(config: HeadsConfig, data: ParallelSet) -> tuple[list[PromptPair], str]:
    """The map's prompt pairs, drawn exactly as `compute_head_map` draws them (same seed, same order; no model),
    and the corruption language; a head drill-down replays them to read one head on the map's own prompts."""
    other = corrupt_language(data, config.src, config.tgt, config.corrupt_language or None)
    rng = random.Random(config.seed)
    pool = data.rows("heads")
    rows = rng.sample(pool, min(config.n_prompts, len(pool)))
    return [prompt_pair(data, row, config.src, config.tgt, config.head_type, config.k_shots, rng, other)
            for row in rows], other


def compute_head_map(handle: ModelHandle, config: HeadsConfig, data: ParallelSet,
                     progress: Progress = silent) -> HeadMap:
    pairs, other = head_pairs(config, data)
    examples: list[Example] = []
    for i, pair in enumerate(pairs):
        examples.append(build_example(handle, pair, config.max_answer_tokens))
        progress(0.1 * (i + 1) / len(pairs), f"clean and corrupted runs {i + 1}/{len(pairs)}")
    mean_clean = torch.stack([ex.clean_heads for ex in examples]).mean(0)  # [L, H, d]
    n = len(examples)
    patch = np.zeros(mean_clean.shape[:2])
    attr = np.zeros(mean_clean.shape[:2])
    patch_s = attr_s = 0.0
    for i, ex in enumerate(examples):
        delta = mean_clean - ex.corrupt_heads
        start = time.perf_counter()
        part = scaled(progress, 0.1 + 0.8 * i / n, 0.1 + 0.8 * (i + 1) / n)
        patch += patch_scores(handle.model, ex.corrupt_prefix, ex.target, delta, config.rows_per_batch,
                              lambda f, m, i=i: part(f, f"prompt {i + 1}/{n}: {m}")) / n
        patch_s += time.perf_counter() - start
        start = time.perf_counter()
        attr += attribute(handle.model, ex.corrupt_prefix, ex.target, delta, config.attribution, config.ig_steps) / n
        attr_s += time.perf_counter() - start
        progress(0.1 + 0.8 * (i + 1) / n, f"prompt {i + 1}/{n}: attribution done")
    tok = handle.tokenizer
    return HeadMap(model=handle.display_name, config=config, patching=patch, attribution=attr,
                   rank_correlation=rank_correlation(patch, attr), mean_clean=mean_clean.numpy().astype(np.float32),
                   rows=tuple(ex.row for ex in examples), answer_offsets=tuple(ex.answer_offset for ex in examples),
                   target_tokens=tuple(tok.decode([ex.target]) for ex in examples), kl=tuple(ex.kl for ex in examples),
                   clean_logp=tuple(ex.clean_logp for ex in examples),
                   corrupt_logp=tuple(ex.corrupt_logp for ex in examples), other_language=other, patch_seconds=patch_s,
                   attribution_seconds=attr_s)


def _head_map_on(subject: OnData, config: HeadsConfig, progress: Progress) -> HeadMap:
    return compute_head_map(subject.handle, config, subject.data, progress)


# The code a head map depends on: this module and the mt modules it draws prompts and scores heads with (every
# verb built on head maps reads these too).
HEADS_READS = (sys.modules[__name__], attribution, data_module, examples_module, patching, prompts, selection)

heads_verb = register(Verb("mt", "heads", HeadsConfig, _head_map_on, "L x H maps of language or translation heads "
                           "(activation patching and a gradient attribution)", reads=HEADS_READS, ref=model_of))


def find_heads(handle: ModelHandle, config: HeadsConfig = HeadsConfig(), data: ParallelSet | None = None,
               progress: Progress = silent) -> Computed[HeadMap]:
    """Cached head map for `config` on `data` (default: the built-in set)."""
    data = data or builtin()
    config = dataclasses.replace(config, dataset=data.digest)
    data.check_pair(config.src, config.tgt)
    return heads_verb(OnData(handle, data), config, progress)
