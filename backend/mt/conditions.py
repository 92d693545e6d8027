"""One evaluation condition = a prompt kind, optionally steered or with heads ablated, run greedily on
held-out sentences and scored with chrF++ and the target-language rate. Each condition is cached
on its own, so the steering view, the ablation view and the full evaluation share results."""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

import numpy as np

from backend.errors import UserError
from backend.models.loading import ModelHandle
import backend.mt.fields as fields
import backend.mt.metrics as metrics
import backend.mt.prompt_kinds as prompt_kinds
import backend.mt.steering as steering
from backend.mt.data import ParallelSet, builtin
from backend.mt.examples import encode_answer
from backend.mt.heads import HEADS_READS, HeadsConfig, find_heads
from backend.mt.prompt_kinds import PROMPT_KINDS
from backend.mt.selection import Head, random_heads
from backend.mt.selection import top_heads_in
from backend.mt.steering import STEER_LAYERS, STEER_MODES, STEER_POSITIONS, Intervention, generate_line
from backend.params import Config, param, require
from backend.progress import Partial, Progress, report_partial, scaled, silent, wants_partials
from backend.mt.subject import OnData, model_of
from backend.store import Computed
from backend.verbs import Verb, register


@dataclass(frozen=True)
class ConditionConfig(Config):
    """A generation condition on the `evaluate` split. `steer`: head maps whose top `percent` heads give
    steering vectors (added together, times `strength`). `ablate`: the head map whose top heads are
    zeroed; with `random_draw >= 0` the same number of other heads, drawn with that seed, are zeroed instead."""

    src: str = fields.src()
    tgt: str = fields.tgt()
    prompt: str = param("few-shot", "prompt format", choices=PROMPT_KINDS)
    n_sentences: int = param(20, "held-out sentences: the first n of the 'evaluate' split", ge=1)
    rows: tuple[int, ...] = fields.rows()
    k_shots: int = fields.k_shots(low=0)
    steer: tuple[HeadsConfig, ...] = param((), "head maps whose selected heads steer the generation")
    steer_mode: str = param("add", "how the selected heads steer", choices=STEER_MODES)
    steer_positions: str = fields.steer_positions()
    steer_layers: str = fields.steer_layers()
    strength: float = fields.strength()
    ablate: HeadsConfig | None = param(None, "head map whose selected heads are zeroed")
    random_draw: int = param(-1, "with ablate: zero random heads of this draw instead (-1: the selected ones)", ge=-1)
    percent: float = fields.percent()
    max_new_tokens: int = fields.max_new_tokens()
    seed: int = fields.seed()
    dataset: str = fields.dataset()

    def __post_init__(self) -> None:
        super().__post_init__()
        need = PROMPT_KINDS.get(self.prompt).min_shots
        require(self.k_shots >= need, f"A {self.prompt} prompt needs at least {need} demonstration(s).")


@dataclass(frozen=True)
class ConditionResult:
    """Outputs and scores of one condition. chrF++ is 0-100; target_rate is the share of outputs identified as tgt."""

    label: str
    config: ConditionConfig
    rows: tuple[int, ...]  # the data set's rows translated; the per-sentence fields below follow their order
    sources: tuple[str, ...]
    references: tuple[str, ...]
    outputs: tuple[str, ...]
    detected: tuple[str, ...]  # language code per output ('' = empty output)
    sentence_chrf: np.ndarray  # [n]
    chrf: float  # corpus chrF++
    target_rate: float
    heads: tuple[Head, ...]  # heads steered from or ablated

    @property
    def degeneration(self) -> float:
        """Mean share of repeated word bigrams per output (0 = none; "Le Le Le Le" -> 2/3)."""
        return metrics.degeneration(self.outputs)


def label(config: ConditionConfig) -> str:
    text = config.prompt
    if config.steer:
        how = f"×{config.strength:g}" if STEER_MODES.get(config.steer_mode).uses_strength else config.steer_mode
        where = "" if config.steer_positions == "every-step" else f", {config.steer_positions}"
        where += "" if config.steer_layers == "all" else f", {config.steer_layers} layers"
        text += (" + steering (" + " + ".join(h.head_type for h in config.steer)
                 + f", {config.percent:g}%, {how}{where})")
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
    return held_out[:config.n_sentences]


def _intervention(handle: ModelHandle, config: ConditionConfig, data: ParallelSet,
                  progress: Progress) -> tuple[Intervention, tuple[Head, ...]]:
    vectors, patches, used = [], [], []
    mode = STEER_MODES.get(config.steer_mode)
    allowed = STEER_LAYERS.get(config.steer_layers).run(handle.info.n_layers)
    for heads_config in config.steer:
        head_map = find_heads(handle, heads_config, data, progress).value
        selected = top_heads_in(head_map.patching, config.percent, allowed)
        part, chosen = mode.run(handle.model, head_map.mean_clean, selected, tuple(used))
        vectors.extend(part.vectors)
        patches.extend(part.patches)
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
    intervention = Intervention(tuple(vectors), config.strength, ablate, tuple(patches))
    return STEER_POSITIONS.get(config.steer_positions).run(intervention), tuple(used)


def compute_condition(handle: ModelHandle, config: ConditionConfig, data: ParallelSet,
                      progress: Progress = silent) -> ConditionResult:
    """The condition's outputs and scores; the condition scored on the sentences so far is handed to the
    progress's watcher after each sentence (the page's table grows line by line)."""
    rows = _rows(config, data)
    intervention, used = _intervention(handle, config, data, scaled(progress, 0.0, 0.3))
    sources = [data.text(config.src, r) for r in rows]
    references = [data.text(config.tgt, r) for r in rows]
    candidates = metrics.candidates_for(data.languages)
    prompt_ids = PROMPT_KINDS.get(config.prompt).run
    outputs = []
    for i, row in enumerate(rows):
        # Budget: twice the reference length plus slack (an upper bound only; generation stops at a newline).
        budget = min(config.max_new_tokens, 2 * len(encode_answer(handle, " " + references[i])) + 8)
        outputs.append(generate_line(handle.model, handle.tokenizer, prompt_ids(handle, config, data, row), budget,
                                     intervention))
        if wants_partials(progress):
            report_partial(progress, Partial(_scored(config, rows, sources, references, outputs, candidates, used),
                                             i + 1, len(rows), "sentences"))
        progress(0.3 + 0.7 * (i + 1) / len(rows), f"{label(config)}: {i + 1}/{len(rows)} sentences")
    return _scored(config, rows, sources, references, outputs, candidates, used)


def _scored(config: ConditionConfig, rows: list[int], sources: list[str], references: list[str], outputs: list[str],
            candidates, used: tuple[Head, ...]) -> ConditionResult:
    """The condition on its first len(outputs) sentences."""
    n = len(outputs)
    references = references[:n]
    detected = [metrics.identify(o, candidates) for o in outputs]
    return ConditionResult(label=label(config), config=config, rows=tuple(rows[:n]), sources=tuple(sources[:n]),
                           references=tuple(references), outputs=tuple(outputs), detected=tuple(detected),
                           sentence_chrf=np.array([metrics.sentence_chrf_pp(o, r)
                                                   for o, r in zip(outputs, references)]),
                           chrf=metrics.chrf_pp(outputs, references),
                           target_rate=float(np.mean([d == config.tgt for d in detected])), heads=used)


def _condition_on(subject: OnData, config: ConditionConfig, progress: Progress) -> ConditionResult:
    return compute_condition(subject.handle, config, subject.data, progress)


# The code a condition depends on: this module, the prompts, steering and scores it generates and measures with,
# and the head maps its steering vectors and ablations come from (the experiments read these too).
CONDITION_READS = (sys.modules[__name__], metrics, prompt_kinds, steering, *HEADS_READS)

condition_verb = register(Verb("mt", "condition", ConditionConfig, _condition_on, "one generation condition (a "
                               "prompt kind, optionally steered or ablated) scored with chrF++ and the "
                               "target-language rate", reads=CONDITION_READS, ref=model_of))


def run_condition(handle: ModelHandle, config: ConditionConfig, data: ParallelSet | None = None,
                  progress: Progress = silent) -> Computed[ConditionResult]:
    data = data or builtin()
    data.check_pair(config.src, config.tgt)
    sub = tuple(dataclasses.replace(h, dataset=data.digest) for h in config.steer)
    ablate = dataclasses.replace(config.ablate, dataset=data.digest) if config.ablate else None
    config = dataclasses.replace(config, dataset=data.digest, steer=sub, ablate=ablate)
    return condition_verb(OnData(handle, data), config, progress)
