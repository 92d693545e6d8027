"""How much work a watermark generation is (`backend.estimates.work`): sentences, each a little longer than the one
before (its context grew), x the candidate rows decoded together (a method that ranks candidates decodes them as
one batch, whose rows share each step's fixed cost)."""
from __future__ import annotations

from backend.estimates.work import declare_work
from backend.watermark.generation import GenerateRequest
from backend.watermark.methods import METHODS

BATCH_ROW_SHARE = 0.25  # what each extra row of a batched step adds to a one-row step (a small model on a CPU)
# each sentence re-reads a context grown by the ones before it: 3 sentences took 3.4-3.8x one with one torch thread
# (bench/fit_probes.py, load ~2), 4.7x in an earlier bench/estimates.py run, 2.9-3.2x at four loads in a later one and
# 3.0x in a later fit (sentence lengths vary with the sampling): 3.3x between them
CONTEXT_SHARE = 0.05


def generation_units(subject, request: GenerateRequest) -> float:
    method = METHODS.get(request.method)
    rows = method.config_in(request).n_candidates if method.ranks_candidates else 1
    sentences = request.sampling.max_sentences
    return (sentences + CONTEXT_SHARE * sentences * (sentences - 1)) * (1 + BATCH_ROW_SHARE * (rows - 1))


# .venv/bin/python bench/fit_probes.py (CPU times, one torch thread, SmolLM2-135M, load ~8): 10.4-11.3 in 6 runs
declare_work("watermark", "generate", generation_units, probes_per_unit=11.2)
