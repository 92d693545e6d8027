"""One evaluation condition = a prompt kind, optionally steered or with heads ablated, run greedily on
held-out sentences and scored with chrF++ and the target-language rate. Each condition is cached
on its own, so the steering view, the ablation view and the full evaluation share results."""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

import numpy as np

from backend.errors import UserError
from backend.models.generate import encode_prompt
from backend.models.loading import ModelHandle
from backend.mt import metrics
from backend.mt.data import ParallelSet, builtin
from backend.mt.examples import encode, encode_answer
from backend.mt.heads import HeadsConfig, find_heads
from backend.mt.prompts import PROMPT_KINDS, Demo, demo_block, instruction, pick_demos, query
from backend.mt.selection import Head, random_heads
from backend.mt.steering import STEER_MODES, Intervention, generate, head_patches, steering_vectors
from backend.progress import Progress, scaled, silent
from backend.store import Computed, ModelRef, cached

CODE_VERSION = "2"


@dataclass(frozen=True)
class ConditionConfig:
    """A generation condition on the `evaluate` split. `steer`: head maps whose top `percent` heads give
    steering vectors (added together, times `strength`). `ablate`: the head map whose top heads are
    zeroed; with `random_draw >= 0` the same number of other heads, drawn with that seed, are zeroed instead."""

    src: str = "en"
    tgt: str = "fr"
    prompt: str = "few-shot"  # see prompts.PROMPT_KINDS
    n_sentences: int = 20
    rows: tuple[int, ...] = ()  # explicit data rows (overrides n_sentences)
    k_shots: int = 5
    steer: tuple[HeadsConfig, ...] = ()
    steer_mode: str = "add"  # see steering.STEER_MODES
    strength: float = 3.0
    ablate: HeadsConfig | None = None
    random_draw: int = -1
    percent: float = 1.0
    max_new_tokens: int = 48
    seed: int = 0
    dataset: str = ""


@dataclass(frozen=True)
class ConditionResult:
    """Outputs and scores of one condition. chrF++ is 0-100; target_rate is the share of outputs identified as tgt."""

    label: str
    config: ConditionConfig
    rows: tuple[int, ...]
    sources: tuple[str, ...]
    references: tuple[str, ...]
    outputs: tuple[str, ...]
    detected: tuple[str, ...]  # language code per output ('' = empty output)
    sentence_chrf: np.ndarray  # [n]
    chrf: float  # corpus chrF++
    target_rate: float
    heads: tuple[Head, ...]  # heads steered from or ablated


def label(config: ConditionConfig) -> str:
    text = config.prompt
    if config.steer:
        how = f"×{config.strength:g}" if config.steer_mode == "add" else config.steer_mode
        text += " + steering (" + " + ".join(h.head_type for h in config.steer) + f", {config.percent:g}%, {how})"
    if config.ablate is not None:
        what = f"random heads #{config.random_draw}" if config.random_draw >= 0 else f"{config.ablate.head_type} heads"
        text += f" − {what}"
    return text


def _rows(config: ConditionConfig, data: ParallelSet) -> list[int]:
    held_out = data.rows("evaluate")
    if config.rows:
        unknown = [r for r in config.rows if not 0 <= r < len(data)]
        if unknown:
            raise UserError(f"Rows {unknown} are not in the data set.")
        return list(config.rows)
    if config.n_sentences < 1:
        raise UserError("Evaluate at least one sentence.")
    return held_out[:config.n_sentences]


def _prompt_ids(handle: ModelHandle, config: ConditionConfig, data: ParallelSet, row: int) -> list[int]:
    source = data.text(config.src, row)
    if config.prompt == "instruction":
        return encode_prompt(handle, instruction(source, config.src, config.tgt), chat=True)[0].tolist()
    if config.prompt == "instruction-free":
        return encode(handle, query(source))
    rng = random.Random(f"{config.seed}:{row}")
    demos = [Demo(data.text(config.src, r), data.text(config.tgt, r))
             for r in pick_demos(data, row, config.k_shots, rng)]
    return encode(handle, demo_block(demos) + query(source))


def _intervention(handle: ModelHandle, config: ConditionConfig, data: ParallelSet,
                  progress: Progress) -> tuple[Intervention, tuple[Head, ...]]:
    vectors, patches, used = [], [], []
    for heads_config in config.steer:
        head_map = find_heads(handle, heads_config, data, progress).value
        chosen = head_map.selected(config.percent)
        if config.steer_mode == "add":  # language and translation vectors are summed, as in the paper
            vectors.append(steering_vectors(handle.model, head_map.mean_clean, chosen))
        else:  # a head can be replaced only once: the first head map that selects it gives its value
            chosen = tuple(h for h in chosen if h not in used)
            patches.extend(head_patches(head_map.mean_clean, chosen))
        used.extend(h for h in chosen if h not in used)
    ablate: tuple[Head, ...] = ()
    if config.ablate is not None:
        chosen = find_heads(handle, config.ablate, data, progress).value.selected(config.percent)
        if config.random_draw >= 0:
            info = handle.info
            chosen = random_heads(info.n_layers, info.n_heads, len(chosen), 7919 * config.seed + config.random_draw,
                                  exclude=chosen)
        ablate = chosen
        used.extend(chosen)
    return Intervention(tuple(vectors), config.strength, ablate, tuple(patches)), tuple(used)


def compute_condition(handle: ModelHandle, config: ConditionConfig, data: ParallelSet,
                      progress: Progress = silent) -> ConditionResult:
    rows = _rows(config, data)
    intervention, used = _intervention(handle, config, data, scaled(progress, 0.0, 0.3))
    sources = [data.text(config.src, r) for r in rows]
    references = [data.text(config.tgt, r) for r in rows]
    candidates = metrics.candidates_for(data.languages)
    outputs = []
    for i, row in enumerate(rows):
        # Budget: twice the reference length plus slack (an upper bound only; generation stops at a newline).
        budget = min(config.max_new_tokens, 2 * len(encode_answer(handle, " " + references[i])) + 8)
        outputs.append(generate(handle.model, handle.tokenizer, _prompt_ids(handle, config, data, row), budget,
                                intervention))
        progress(0.3 + 0.7 * (i + 1) / len(rows), f"{label(config)}: {i + 1}/{len(rows)} sentences")
    detected = [metrics.identify(o, candidates) for o in outputs]
    return ConditionResult(label(config), config, tuple(rows), tuple(sources), tuple(references), tuple(outputs),
                           tuple(detected), np.array([metrics.sentence_chrf_pp(o, r) for o, r in zip(outputs, references)]),
                           metrics.chrf_pp(outputs, references),
                           float(np.mean([d == config.tgt for d in detected])), used)


def run_condition(handle: ModelHandle, config: ConditionConfig, data: ParallelSet | None = None,
                  progress: Progress = silent) -> Computed[ConditionResult]:
    data = data or builtin()
    data.check_pair(config.src, config.tgt)
    if config.prompt not in PROMPT_KINDS:
        raise UserError(f"Unknown prompt {config.prompt!r}; choose from {', '.join(PROMPT_KINDS)}.")
    if config.prompt == "few-shot" and config.k_shots < 1:
        raise UserError("A few-shot prompt needs at least one demonstration.")
    if config.steer_mode not in STEER_MODES:
        raise UserError(f"Unknown steering mode {config.steer_mode!r}; choose from {', '.join(STEER_MODES)}.")
    if not 0 <= config.strength <= 20:
        raise UserError("Steering strength must be between 0 and 20.")
    sub = tuple(dataclasses.replace(h, dataset=data.digest) for h in config.steer)
    ablate = dataclasses.replace(config.ablate, dataset=data.digest) if config.ablate else None
    config = dataclasses.replace(config, dataset=data.digest, steer=sub, ablate=ablate)
    return cached("mt", "condition", ModelRef.of(handle), config,
                  lambda: compute_condition(handle, config, data, progress), code_version=CODE_VERSION)
