"""What a NAG verb works on beside its config: the loaded model, and (in each verb's subclass) the documents, pool
or target sets it reads. The store keys the result on the model's fingerprint (`OnModel.model`) and on the verb's
`key`: the config with the digests of those inputs, never the inputs themselves."""
from __future__ import annotations

from dataclasses import dataclass

from backend.models.loading import ModelHandle
from backend.store import ModelRef


@dataclass(frozen=True, eq=False)
class OnModel:
    handle: ModelHandle

    def model(self) -> ModelRef:
        return ModelRef.of(self.handle)
