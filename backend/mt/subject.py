"""What the MT verbs work on: a loaded model and the parallel set its prompts and references come from.

The store keys a result on the model's fingerprint (`model_of`) and on the config, which carries the set's digest
(`dataset`): the set itself travels beside the model, not in the key."""
from __future__ import annotations

from dataclasses import dataclass

from backend.models.loading import ModelHandle
from backend.mt.data import ParallelSet
from backend.store import ModelRef


@dataclass(frozen=True, eq=False)
class OnData:
    handle: ModelHandle
    data: ParallelSet


def model_of(subject: OnData) -> ModelRef:
    return ModelRef.of(subject.handle)
