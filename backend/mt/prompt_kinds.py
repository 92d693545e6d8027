"""The prompt kinds a condition generates from (`PROMPT_KINDS`): run(handle, config, data, row) -> prompt ids.

`config` is a ConditionConfig (src, tgt, k_shots, seed); `min_shots` is how many demonstrations the kind needs.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from backend.models.generate import encode_prompt
from backend.models.loading import ModelHandle
from backend.mt.data import ParallelSet
from backend.mt.examples import encode
from backend.mt.prompts import Demo, demo_block, instruction, pick_demos, query
from backend.variants import Registry, Variant


@dataclass(frozen=True)
class PromptKind(Variant):
    min_shots: int = 0


PROMPT_KINDS: Registry[PromptKind] = Registry("mt-prompt", "prompt kind")


def _instruction(handle: ModelHandle, config, data: ParallelSet, row: int) -> list[int]:
    source = data.text(config.src, row)
    return encode_prompt(handle, instruction(source, config.src, config.tgt), chat=True)[0].tolist()


def _few_shot(handle: ModelHandle, config, data: ParallelSet, row: int) -> list[int]:
    rng = random.Random(f"{config.seed}:{row}")  # the same demonstrations for a row in every condition
    demos = [Demo(data.text(config.src, r), data.text(config.tgt, r))
             for r in pick_demos(data, row, config.k_shots, rng)]
    return encode(handle, demo_block(demos) + query(data.text(config.src, row)))


def _instruction_free(handle: ModelHandle, config, data: ParallelSet, row: int) -> list[int]:
    return encode(handle, query(data.text(config.src, row)))


PROMPT_KINDS.register(PromptKind(
    "instruction", "Instruction",
    "Translate the following sentence from {S} to {T}: … (chat template when the model has one)", _instruction))
PROMPT_KINDS.register(PromptKind(
    "few-shot", "Few-shot", "k demonstrations `Q: src / A: tgt`, then `Q: src / A:`", _few_shot, min_shots=1))
PROMPT_KINDS.register(PromptKind(
    "instruction-free", "Instruction-free", "`Q: src / A:` with no demonstrations and no instruction",
    _instruction_free))
