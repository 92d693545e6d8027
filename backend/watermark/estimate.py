"""How long a generation will take, said before it starts: the calibrated estimate of the generate verb
(`backend.estimates`: this machine's measured rate on this model, the request's size, the current load) for a
request of this method, candidate count and length."""
from __future__ import annotations

import dataclasses

from backend.estimates import Estimate, estimate
from backend.models.loading import ModelHandle
from backend.watermark.generation import GenerateRequest, generate_verb
from backend.watermark.methods import METHODS
from backend.watermark.sampling import SamplingConfig


def expected_seconds(handle: ModelHandle, method: str, n_candidates: int, max_sentences: int,
                     nice: int | None = None) -> Estimate | None:
    """Expected seconds of one generation computed at `nice` (default: the calling thread's); None without a
    store."""
    request = GenerateRequest(prompt="Hello.", method=method, sampling=SamplingConfig(max_sentences=max_sentences))
    chosen = METHODS.get(method)
    if chosen.ranks_candidates:
        settings = dataclasses.replace(chosen.config_in(request), n_candidates=max(int(n_candidates), 1))
        request = dataclasses.replace(request, **{chosen.field: settings})
    return estimate(generate_verb, handle, request, nice=nice)
