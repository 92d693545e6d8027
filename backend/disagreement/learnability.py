"""Learnability: are the examples a trained adapter still fails ones whose gradient points away from the rest?

On problems of the reasoning model's own training data (its adapter's recipe, `<adapter>/eval.json`), each example
is classed by greedy rollouts: easy (the base solves it), learned (the base fails, the reasoning model solves it) or
unlearnable (both fail, although a correct worked solution exists and was in the training distribution). For each,
the gradient of the reasoning model's loss on the correct solution with respect to its adapter's LoRA factors (a
model without an adapter: the weights of chosen layers; backend/models/gradients.py) is projected to a fixed random
low dimension as it streams (learnability_stats.sketch) and stored per example, so a stopped run resumes and the full
gradients are never held together. The result: the cosine-similarity matrix, each example's mean similarity to the
rest, and unlearnable against learned by a Mann-Whitney test and the AUROC of low similarity.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace

import numpy as np
import torch

import backend.disagreement.learnability_stats as learnability_stats
import backend.disagreement.rollout as rollout_module
import backend.disagreement.scoring as scoring
import backend.models.gradients as gradients
from backend.disagreement.learnability_stats import (GroupTest, cluster_order, cosine_matrix, group_test,
                                                     mean_to_rest, sketch)
from backend.disagreement.pair import Pair, pair_verb
from backend.disagreement.rollout import answer_correct, decode_tokens, greedy_many, prompt_ids
from backend.disagreement.scoring import RolloutConfig, fitting
from backend.errors import UserError
from backend.models.architecture import arch_info
from backend.models.gradients import adapter_factors, gradient_size, layer_modules, loss_gradient
from backend.models.rules import keep_fitting
from backend.params import Config, param, same_as
from backend.progress import Progress, scaled, silent
from backend.tasks.arithmetic import Problem, extract_answer, generate_problems
from backend.verbs import Verb

CATEGORIES = ("easy", "learned", "unlearnable")
MAX_EXAMPLES = 2000
BATCH = 8  # problems whose greedy rollouts run side by side (a CPU step over 8 rows costs far less than 8 steps)


@dataclass(frozen=True)
class LearnabilityConfig(Config):
    n: int = param(16, "training problems of the reasoning model's adapter to compare", ge=1, le=MAX_EXAMPLES,
                   hint="(at least one example is needed)")
    max_new_tokens: int = same_as(RolloutConfig, "max_new_tokens")
    sketch_dim: int = param(8192, "numbers each gradient is projected to (CountSketch; 0: the exact gradient)",
                            ge=0, le=1 << 20)
    layers: tuple[int, ...] = param((), "a reasoning model without an adapter: layers whose weights' gradient is "
                                        "compared (none: the last two)")
    seed: int = param(0, "seed of the random projection")

    @staticmethod
    def parse_layers(text: str) -> tuple[int, ...]:
        """`"28,29"` -> (28, 29); "" -> () (the default); anything else a UserError naming the field."""
        try:
            return tuple(int(part) for part in text.split(",") if part.strip())
        except ValueError:
            raise UserError(f"layers: comma-separated layer numbers such as 28,29, got {text!r}.") from None


@dataclass(frozen=True)
class ExampleRecord:
    problem_id: str
    question: str
    difficulty: int
    answer: int
    base_answer: int | None  # what each model's greedy rollout answered (None: no answer line)
    reasoning_answer: int | None
    base_correct: bool
    reasoning_correct: bool
    loss: float  # the reasoning model's mean NLL per token of the correct solution (nats)
    gradient_norm: float  # of the full gradient, before projection
    sketch: np.ndarray  # [D] float16 (empty in a LearnabilityResult, which keeps only the similarities)

    @property
    def category(self) -> str:
        return "easy" if self.base_correct else "learned" if self.reasoning_correct else "unlearnable"


@dataclass(frozen=True)
class LearnabilityResult:
    data: str  # where the problems come from
    gradient_of: str  # which parameters, how many, how projected
    records: tuple[ExampleRecord, ...]
    similarity: np.ndarray  # [n, n] cosine of the projected gradients
    order: np.ndarray  # [n] clustering leaf order
    mean_similarity: np.ndarray  # [n] mean cosine to the other examples
    test: GroupTest
    skipped: tuple[str, ...] = ()  # problems left out by the context rule (rollout or solution over the context)

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(r.category for r in self.records)


@dataclass(frozen=True)
class ExampleKey:
    """What one example's record depends on: its stored artifact's key."""

    problem: tuple[str, str, int, str]  # id, question, answer, solution
    max_new_tokens: int
    sketch_dim: int
    layers: tuple[int, ...]
    seed: int

    @classmethod
    def of(cls, problem: Problem, config: LearnabilityConfig) -> ExampleKey:
        return cls((problem.id, problem.question, problem.answer, problem.solution), config.max_new_tokens,
                   config.sketch_dim, config.layers, config.seed)


@dataclass(frozen=True)
class ExampleRequest:
    """One example of a learnability view: the problem and the view's settings."""

    problem: Problem
    config: LearnabilityConfig


def training_problems(pair: Pair, n: int) -> tuple[list[Problem], str]:
    """The first n problems of the reasoning adapter's training data (its recipe), or of the generator's training
    split when the model has no recipe; and a line saying which."""
    adapter = pair.reasoning.spec.adapter_dir
    recipe: dict = {}
    if adapter is not None and (adapter / "eval.json").exists():
        recipe = json.loads((adapter / "eval.json").read_text()).get("config", {})
    family, style = recipe.get("family", "classic"), recipe.get("solution_style", "plain")
    seed, difficulty = int(recipe.get("seed", 0)), recipe.get("difficulty")
    problems = generate_problems(n, "train", seed=seed, difficulty=difficulty, family=family, style=style)
    where = f"the training data of {adapter.name}" if recipe else "the generator's training split"
    return problems, f"{n} problems of {where} (family {family}, {style} solutions, seed {seed})"


def _targets(pair: Pair, config: LearnabilityConfig):
    """(modules, LoRA factors or None, a line describing them)."""
    spec, model = pair.reasoning.spec, pair.reasoning.model
    if spec.adapter_dir is not None and (spec.adapter_dir / "adapter_config.json").exists():
        factors = adapter_factors(spec.adapter_dir)
        modules = tuple(factors)
        what = f"the LoRA factors of {spec.adapter_dir.name} ({len(modules)} modules"
    else:
        count = arch_info(model).n_layers
        layers = config.layers or tuple(range(max(0, count - 2), count))
        factors, modules = None, layer_modules(model, layers)
        what = f"the weights of layers {', '.join(map(str, layers))} ({len(modules)} modules"
    size = gradient_size(model, modules, factors)
    projected = f"projected to {config.sketch_dim}" if config.sketch_dim else "exact"
    return modules, factors, f"{what}, {size:,} parameters; {projected})"


def _solution_ids(pair: Pair, problem: Problem) -> tuple[torch.Tensor, int]:
    """The chat prompt followed by the worked solution and the end-of-turn token (as the adapter was trained)."""
    prompt = prompt_ids(pair.reasoning, problem)
    tok = pair.reasoning.tokenizer
    target = tok(problem.solution, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    return torch.cat([prompt, torch.tensor([target])], dim=1), prompt.shape[1]


def _fitting(pair: Pair, problems: list[Problem], max_new_tokens: int) -> tuple[list[Problem], tuple[str, ...]]:
    """The context rule for this batch: a problem is kept when both models' rollouts have room for max_new_tokens
    and its worked solution fits the reasoning model (the gradient's forward); the others are skipped, named."""
    rollouts = fitting(pair, problems, max_new_tokens)
    solutions = keep_fitting(pair.reasoning.model, rollouts.kept, lambda p: _solution_ids(pair, p)[0].shape[1], 0,
                             lambda p: p.id)
    return list(solutions.kept), rollouts.skipped + solutions.skipped


def _answers(handle, problems: list[Problem], max_new_tokens: int, stops) -> list[tuple[int | None, bool]]:
    """Each problem's greedy rollout answer and whether it is right (the problems decoded side by side)."""
    prompts = [prompt_ids(handle, problem) for problem in problems]  # the decoder applies the context rule
    texts = [decode_tokens(handle, tokens)[0] for tokens in greedy_many(handle, prompts, max_new_tokens, stops)]
    return [(extract_answer(text), bool(answer_correct(problem, text))) for problem, text in zip(problems, texts)]


def _examples(pair: Pair, problems: list[Problem], config: LearnabilityConfig, modules, factors,
              progress: Progress) -> list[ExampleRecord]:
    """Records for a few problems: both models' rollouts side by side, then each example's gradient."""
    progress(0.0, "rollouts of the base model")
    base = _answers(pair.base, problems, config.max_new_tokens, pair.stops)
    progress(0.3, "rollouts of the reasoning model")
    reasoning = _answers(pair.reasoning, problems, config.max_new_tokens, pair.stops)
    records = []
    for i, problem in enumerate(problems):
        progress(0.6 + 0.4 * i / len(problems), "gradients")
        ids, n_prompt = _solution_ids(pair, problem)
        out = loss_gradient(pair.reasoning.model, ids, n_prompt, modules, factors)
        records.append(ExampleRecord(
            problem_id=problem.id, question=problem.question, difficulty=problem.difficulty, answer=problem.answer,
            base_answer=base[i][0], reasoning_answer=reasoning[i][0], base_correct=base[i][1],
            reasoning_correct=reasoning[i][1], loss=out.loss, gradient_norm=float(out.vector.norm()),
            sketch=sketch(out.vector, config.sketch_dim, config.seed).astype(np.float16)))
    return records


def _example_key(pair: Pair, request: ExampleRequest) -> ExampleKey:
    return ExampleKey.of(request.problem, request.config)


def compute_example(pair: Pair, request: ExampleRequest, progress: Progress = silent) -> ExampleRecord:
    """One example's record alone (a view computes its examples a chunk at a time: `example.many`)."""
    modules, factors, _ = _targets(pair, request.config)
    return _examples(pair, [request.problem], request.config, modules, factors, progress)[0]


_READS = (sys.modules[__name__], learnability_stats, rollout_module, scoring, gradients)

example: Verb[ExampleRequest, ExampleRecord] = pair_verb(
    "learnability_example", ExampleRequest, compute_example, "one training example: both models' answers and its "
    "projected gradient", reads=_READS, key=_example_key)


def compute_learnability(pair: Pair, config: LearnabilityConfig,
                         progress: Progress = silent) -> LearnabilityResult:
    problems, data = training_problems(pair, config.n)
    if not problems:
        raise UserError("n: no training problems to compare.")
    problems, skipped = _fitting(pair, problems, config.max_new_tokens)
    modules, factors, gradient_of = _targets(pair, config)
    records: list[ExampleRecord] = []
    for first in range(0, len(problems), BATCH):  # each example is its own artifact: a stopped run resumes
        chunk = problems[first:first + BATCH]
        keys = [ExampleKey.of(p, config) for p in chunk]
        by_key = dict(zip(keys, chunk))
        where = f"Examples {first + 1}-{first + len(chunk)} of {len(problems)}"
        step = scaled(lambda f, m: progress(f, f"{where}: {m}"), first / len(problems),
                      (first + len(chunk)) / len(problems))
        records.extend(example.many(pair, keys, lambda missing: _examples(pair, [by_key[k] for k in missing], config,
                                                                          modules, factors, step)).values)
    progress(1.0, "Similarities")
    return replace(summarise(records, data, gradient_of), skipped=skipped)


learnability: Verb[LearnabilityConfig, LearnabilityResult] = pair_verb(
    "learnability", LearnabilityConfig, compute_learnability, "gradient similarity of the reasoning model's "
    "training examples, unlearnable against learned",
    reads=_READS)


def summarise(records: list[ExampleRecord], data: str, gradient_of: str) -> LearnabilityResult:
    """Similarity matrix, mean similarity to the rest and the group test, from the per-example records."""
    similarity = cosine_matrix(np.stack([r.sketch for r in records]))
    mean = mean_to_rest(similarity)
    kinds = np.array([r.category for r in records])
    kept = tuple(replace(r, sketch=np.zeros(0, np.float16)) for r in records)  # the per-example artifacts hold them
    return LearnabilityResult(data=data, gradient_of=gradient_of, records=kept,
                              similarity=similarity.astype(np.float32), order=cluster_order(similarity),
                              mean_similarity=mean, test=group_test(mean[kinds == "unlearnable"],
                                                                    mean[kinds == "learned"]))
