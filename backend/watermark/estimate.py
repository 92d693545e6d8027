"""How long a generation will take, said before it starts: from this store's earlier generations on the same model
(seconds per sentence of the same method and candidate count, median), else from a short measurement (a few
decoding steps of that many candidate rows through the kernel)."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch

from backend.models.generate import encode_prompt
from backend.models.kernel import decode, greedy_policy, start
from backend.models.loading import ModelHandle
from backend.store.db import StoreUnavailable
from backend.store.listing import compute_seconds_of
from backend.watermark.methods import METHODS

TOKENS_PER_SENTENCE = {1: 30, "batch": 40}  # a batch runs until its longest candidate ends its sentence
PROBE_STEPS = 6


@dataclass(frozen=True)
class Estimate:
    seconds: float
    basis: str  # how it was obtained, in words


def candidates_in(params: dict) -> int:
    """Candidates per sentence of a stored generation request: its method's own count (1 for a method that does not
    rank candidates, or one no longer registered)."""
    name = params.get("method")
    if name not in METHODS.names() or not METHODS.get(name).ranks_candidates:
        return 1
    return int((params.get(METHODS.get(name).field) or {}).get("n_candidates", 1))


def _earlier(fingerprint: str, method: str, n_candidates: int) -> list[float]:
    """Seconds per requested sentence of this store's earlier generations (same model, method, candidates)."""
    try:
        rows = compute_seconds_of("watermark", "generate", fingerprint)
    except StoreUnavailable:
        return []
    rates = []
    for p, seconds in rows:
        candidates = candidates_in(p)
        sentences = (p.get("sampling") or {}).get("max_sentences") or 0
        if p.get("method") == method and candidates == n_candidates and sentences and seconds:
            rates.append(float(seconds) / sentences)
    return rates


@torch.no_grad()
def _measured_step(handle: ModelHandle, prompt: str, rows: int) -> tuple[float, float]:
    """(prefill seconds, seconds per decoding step) for `rows` candidate rows, measured now."""
    ids = encode_prompt(handle, prompt, chat=True)
    begin = time.perf_counter()
    decoder = start(handle.model, ids, n=rows, max_new_tokens=PROBE_STEPS)
    prefill = time.perf_counter() - begin
    begin = time.perf_counter()
    decode(decoder, greedy_policy, PROBE_STEPS + 1)  # no stop ids: PROBE_STEPS forwards after the first token
    return prefill, (time.perf_counter() - begin) / PROBE_STEPS


def expected_seconds(handle: ModelHandle, method: str, n_candidates: int, max_sentences: int,
                     prompt: str = "Hello.") -> Estimate:
    """Expected seconds of one generation (see the module docstring)."""
    rows = max(int(n_candidates), 1)
    earlier = _earlier(handle.fingerprint, method, rows)
    if earlier:
        return Estimate(seconds=statistics.median(earlier) * max_sentences,
                        basis=f"median of {len(earlier)} earlier run(s) of this method on this model")
    prefill, step = _measured_step(handle, prompt, rows)
    tokens = TOKENS_PER_SENTENCE[1] if rows == 1 else TOKENS_PER_SENTENCE["batch"]
    # the context grows by a sentence each time: its prefill is taken twice the prompt's on average
    return Estimate(seconds=max_sentences * (2 * prefill + tokens * step),
                    basis=f"measured now: {PROBE_STEPS} decoding steps of {rows} row(s), ~{tokens} tokens a sentence")
