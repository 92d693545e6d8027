"""The three experiments of the view, each a set of cached conditions:
- steer: instruction-free vs instruction-free + steering vs the instruction baseline, side by side;
- ablate: few-shot with the selected heads zeroed vs the same number of random heads (several draws);
- evaluate: the full table (instruction, few-shot, instruction-free, instruction-free + steering,
  few-shot − language heads, few-shot − translation heads, few-shot − random heads)."""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass

import numpy as np

from backend.models.loading import ModelHandle
import backend.mt.fields as fields
import backend.mt.metrics as metrics
from backend.mt.conditions import CONDITION_READS, ConditionConfig, ConditionResult, run_condition
from backend.mt.data import ParallelSet, builtin
from backend.mt.heads import HeadsConfig
from backend.mt.prompts import HEAD_TYPES
from backend.mt.steering import STEER_MODES
from backend.params import Config, param, require
from backend.progress import Partial, Progress, SubProgress, report_partial, silent
from backend.mt.subject import OnData, model_of
from backend.store import Computed
from backend.variants import Registry, Variant
from backend.verbs import Verb, register


@dataclass(frozen=True)
class ExperimentConfig(Config):
    """Shared settings. `heads` is the head-finding template (its src/tgt/head_type are filled in per use)."""

    src: str = fields.src()
    tgt: str = fields.tgt()
    n_sentences: int = param(10, "held-out sentences: the first n of the 'evaluate' split", ge=1)
    rows: tuple[int, ...] = fields.rows()
    percent: float = fields.percent()
    strength: float = fields.strength()
    steer_types: tuple[str, ...] = param(("language", "translation"), "head types whose vectors steer (summed)")
    steer_mode: str = param("add", "how the selected heads steer", choices=STEER_MODES)
    steer_positions: str = fields.steer_positions()
    steer_layers: str = fields.steer_layers()
    ablate_type: str = param("language", "head type whose selected heads are zeroed", choices=HEAD_TYPES)
    n_random: int = param(3, "random-head control draws", ge=0, le=10)
    k_shots: int = fields.k_shots()
    max_new_tokens: int = fields.max_new_tokens()
    heads: HeadsConfig = param(HeadsConfig(), "head-finding template (src, tgt and head type are filled in)")
    seed: int = fields.seed()
    dataset: str = fields.dataset()

    def __post_init__(self) -> None:
        super().__post_init__()
        unknown = [t for t in self.steer_types if t not in HEAD_TYPES]
        require(not unknown, f"Unknown head type(s) {', '.join(map(repr, unknown))} to steer with; "
                             f"choose from {', '.join(HEAD_TYPES.names())}.")


@dataclass(frozen=True)
class Experiment:
    """Named conditions in display order."""

    model: str
    kind: str  # steer | ablate | evaluate
    config: ExperimentConfig
    conditions: tuple[ConditionResult, ...]

    def table(self) -> list[dict]:
        return [{"condition": c.label, "chrF++": round(c.chrf, 2), "target-language rate": round(c.target_rate, 3),
                 "repeated bigrams": round(c.degeneration, 3), "sentences": len(c.outputs), "heads": len(c.heads)}
                for c in self.conditions]

    def _one(self, label: str) -> ConditionResult | None:
        return next((c for c in self.conditions if c.label == label), None)

    def headline(self) -> dict:
        """The figures the page leads with. Steering: share of the chrF++ gap between the instruction-free prompt
        and the reference prompt (few-shot if run, else the instruction) that the steered prompt recovers.
        Ablation: share of the few-shot prompt's chrF++ gain over the instruction-free prompt that zeroing the
        selected heads (and, on average, random heads) removes. Plus target-language rates and degeneration."""
        free, few, instr = self._one("instruction-free"), self._one("few-shot"), self._one("instruction")
        reference = few or instr
        out: dict = {"reference": reference.label if reference else None}
        for c in self.conditions:
            if c.config.steer and free is not None and reference is not None:
                out["steering"] = {"label": c.label, "gap_recovered": metrics.gap_recovered(c.chrf, free.chrf,
                                                                                            reference.chrf),
                                   "chrf": c.chrf, "target_rate": c.target_rate, "degeneration": c.degeneration,
                                   "reference_degeneration": reference.degeneration}
        if few is not None:
            floor = free.chrf if free is not None else float("nan")
            for kind, drops in (("selected", [c for c in self.conditions if c.config.ablate is not None
                                              and c.config.random_draw < 0]),
                                ("random", [c for c in self.conditions if c.config.random_draw >= 0])):
                if drops:
                    lost = [1.0 - metrics.gap_recovered(c.chrf, floor, few.chrf) for c in drops]
                    out[f"ablation_{kind}"] = {"gap_lost": float(np.mean(lost)),
                                               "rate_drop": float(np.mean([few.target_rate - c.target_rate
                                                                           for c in drops]))}
        return out

    def find(self, prefix: str) -> list[ConditionResult]:
        return [c for c in self.conditions if c.label.startswith(prefix)]

    def ablation_summary(self) -> dict:
        """Drop in target-language rate and chrF++ vs plain few-shot, for selected and random heads."""
        base = next((c for c in self.conditions if c.label == "few-shot"), None)
        if base is None:
            return {}
        out = {}
        for c in self.conditions:
            if c.config.ablate is None:
                continue
            kind = "random" if c.config.random_draw >= 0 else c.config.ablate.head_type
            out.setdefault(kind, []).append((base.target_rate - c.target_rate, base.chrf - c.chrf))
        return {k: {"rate_drop_mean": float(np.mean([d[0] for d in v])), "rate_drop_std": float(np.std([d[0] for d in v])),
                    "chrf_drop_mean": float(np.mean([d[1] for d in v])), "draws": len(v)} for k, v in out.items()}


def _heads(config: ExperimentConfig, head_type: str) -> HeadsConfig:
    return dataclasses.replace(config.heads, src=config.src, tgt=config.tgt, head_type=head_type)


def _condition(config: ExperimentConfig, prompt: str, **changes) -> ConditionConfig:
    return ConditionConfig(src=config.src, tgt=config.tgt, prompt=prompt, n_sentences=config.n_sentences,
                           rows=config.rows, k_shots=config.k_shots, strength=config.strength,
                           steer_mode=config.steer_mode, steer_positions=config.steer_positions,
                           steer_layers=config.steer_layers, percent=config.percent, max_new_tokens=config.max_new_tokens, seed=config.seed, **changes)


def _steering(config: ExperimentConfig) -> tuple[HeadsConfig, ...]:
    return tuple(_heads(config, t) for t in config.steer_types)


def _random_ablations(config: ExperimentConfig) -> list[ConditionConfig]:
    ablate = _heads(config, config.ablate_type)
    return [_condition(config, "few-shot", ablate=ablate, random_draw=d) for d in range(config.n_random)]


def _plan_steer(config: ExperimentConfig) -> list[ConditionConfig]:
    require(bool(config.steer_types), "Pick at least one head type to steer with.")
    return [_condition(config, "instruction-free"), _condition(config, "instruction-free", steer=_steering(config)),
            _condition(config, "few-shot"), _condition(config, "instruction")]


def _plan_ablate(config: ExperimentConfig) -> list[ConditionConfig]:
    return [_condition(config, "instruction-free"), _condition(config, "few-shot"), _condition(config, "few-shot", ablate=_heads(config, config.ablate_type)),
            *_random_ablations(config)]


def _plan_evaluate(config: ExperimentConfig) -> list[ConditionConfig]:
    steer = _steering(config)
    ablations = [_condition(config, "few-shot", ablate=_heads(config, t)) for t in HEAD_TYPES.names()]
    return [_condition(config, "instruction"), _condition(config, "few-shot"), _condition(config, "instruction-free"),
            *([_condition(config, "instruction-free", steer=steer)] if steer else []), *ablations,
            *_random_ablations(config)]


# An experiment's `run(config) -> [ConditionConfig]` plans its conditions, in display order.
EXPERIMENTS: Registry[Variant] = Registry("mt-experiment", "MT experiment")
EXPERIMENTS.register(Variant("steer", "Side by side", "instruction-free vs steered vs instruction baseline",
                             _plan_steer, ExperimentConfig))
EXPERIMENTS.register(Variant("ablate", "Ablation", "few-shot with selected heads vs random heads zeroed",
                             _plan_ablate, ExperimentConfig))
EXPERIMENTS.register(Variant("evaluate", "Evaluation", "the full evaluation table on held-out sentences",
                             _plan_evaluate, ExperimentConfig))


def plan(config: ExperimentConfig, kind: str) -> list[ConditionConfig]:
    return EXPERIMENTS.get(kind).run(config)


def _experiment_verb(kind: Variant) -> Verb:
    """The experiment `kind` as a verb: its conditions in display order, each cached on its own."""
    def run_conditions(subject: OnData, config: ExperimentConfig, progress: Progress) -> Experiment:
        """The conditions in turn; the experiment so far (the finished conditions and the running one's sentences
        so far) is handed to the progress's watcher as each sentence ends."""
        conditions = plan(config, kind.name)
        results: list[ConditionResult] = []

        def so_far(running: tuple[ConditionResult, ...]) -> Experiment:
            return Experiment(model=subject.handle.display_name, kind=kind.name, config=config,
                              conditions=(*results, *running))

        def with_the_others(partial: Partial) -> Partial | None:  # a condition's sentences so far
            if not isinstance(partial.value, ConditionResult):
                return None  # a head map's, say: not a row of this table
            return Partial(so_far((partial.value,)), len(results), len(conditions), "conditions")

        for i, cond in enumerate(conditions):
            part = SubProgress(progress, i / len(conditions), (i + 1) / len(conditions), convert=with_the_others)
            results.append(run_condition(subject.handle, cond, subject.data, part).value)
            report_partial(progress, Partial(so_far(()), len(results), len(conditions), "conditions"))
        return so_far(())

    return register(Verb("mt", kind.name, ExperimentConfig, run_conditions, kind.help,
                         reads=(sys.modules[__name__], *CONDITION_READS), ref=model_of))


EXPERIMENT_VERBS: dict[str, Verb] = {kind.name: _experiment_verb(kind) for kind in EXPERIMENTS}


def run_experiment(handle: ModelHandle, kind: str, config: ExperimentConfig = ExperimentConfig(),
                   data: ParallelSet | None = None, progress: Progress = silent) -> Computed[Experiment]:
    data = data or builtin()
    config = dataclasses.replace(config, dataset=data.digest)
    plan(config, kind)  # an unknown kind or a plan the config cannot make is refused before any lookup
    return EXPERIMENT_VERBS[kind](OnData(handle, data), config, progress)


def steer(handle, config=ExperimentConfig(), data=None, progress=silent) -> Computed[Experiment]:
    return run_experiment(handle, "steer", config, data, progress)


def ablate(handle, config=ExperimentConfig(), data=None, progress=silent) -> Computed[Experiment]:
    return run_experiment(handle, "ablate", config, data, progress)


def evaluate(handle, config=ExperimentConfig(), data=None, progress=silent) -> Computed[Experiment]:
    return run_experiment(handle, "evaluate", config, data, progress)
