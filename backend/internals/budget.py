"""The memory an Inspect computation will take, estimated from the model's shapes and the prompt's length before any
forward, and a refusal naming the number when it exceeds DASH_INSPECT_MAX_MB (backend/config.py). Any verb that
runs a traced forward calls `check_budget` with what it keeps beyond the plain trace.

The estimate counts what one traced forward holds at its peak, in fp32 (the read-outs are fp32 whatever the model):
- kept for the whole forward: logits `[T, V]`, the residual stream `[L + 1, T, d]`, every head's output read by the
  decomposition `[L, T, d]`, and the attention probabilities of each layer whose pattern is kept `[H, T, T]`;
- live inside one layer: its MLP (`3 [T, I]`), q/k/v and output (`4 [T, d]`) and, under eager attention, the scores
  and their masked copy next to the probabilities (`2 [H, T, T]`) plus the `[T, T]` mask;
- the read-out of the logit lens: a chunk of at least one layer's `[T, V]` logits (2^25 when that is more), with
  its normed copy, probabilities and comparisons (4 such chunks);
- the runtime's own growth during a forward (kernels, thread pools, allocator arenas), a fixed 512 MB.
`bench/inspect_memory.py` measures peak RSS against it (the estimate is meant to be above it)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from backend.config import settings
from backend.errors import UserError
from backend.models.architecture import arch_info

READOUT_CHUNK = 2**25  # logits per chunk of the lens's read-out (backend/internals/lens.py)
RUNTIME_BYTES = 512 * 2**20  # measured: 0.2-0.3 GB above the terms below at 1k-2k tokens on SmolLM2


@dataclass(frozen=True)
class Estimate:
    tokens: int
    bytes: int
    budget_bytes: int

    @property
    def mb(self) -> float:
        return self.bytes / 2**20

    @property
    def fits(self) -> bool:
        return self.bytes <= self.budget_bytes

    def to_json(self) -> dict:
        return {"tokens": self.tokens, "mb": round(self.mb, 1), "budget_mb": round(self.budget_bytes / 2**20, 1)}


def estimate(model, tokens: int, pattern_layers: int = 0, readout: bool = False, extra_bytes: int = 0) -> Estimate:
    """Peak activation memory of one traced Inspect forward over `tokens` tokens keeping `pattern_layers` layers'
    attention probabilities (eager attention when > 0), with the lens's read-out of every layer when `readout`,
    plus `extra_bytes` the caller keeps besides."""
    info = arch_info(model)
    width = torch.finfo(next(model.parameters()).dtype).bits // 8
    t, d, h = tokens, info.hidden_size, info.n_heads
    kept = t * info.vocab_size + (2 * info.n_layers + 1) * t * d + pattern_layers * h * t * t
    layer = 3 * t * info.intermediate_size + 4 * t * d + (2 * h * t * t + t * t if pattern_layers else t * t)
    chunk = max(t * info.vocab_size, min(READOUT_CHUNK, (info.n_layers + 1) * t * info.vocab_size))
    total = (kept + layer + (4 * chunk if readout else 0)) * max(width, 4) + RUNTIME_BYTES + extra_bytes
    return Estimate(tokens=tokens, bytes=int(total), budget_bytes=settings().inspect_max_bytes)


def check_budget(model, tokens: int, pattern_layers: int = 0, readout: bool = False, extra_bytes: int = 0,
                 what: str = "This prompt") -> Estimate:
    """The estimate, or a refusal naming it when it is over the budget."""
    found = estimate(model, tokens, pattern_layers, readout, extra_bytes)
    if not found.fits:
        raise UserError(f"{what} needs about {_mb(found.bytes)} MB for {tokens:,} tokens, over the "
                        f"{_mb(found.budget_bytes)} MB budget for one Inspect computation "
                        "(DASH_INSPECT_MAX_MB): shorten the prompt.")
    return found


def _mb(count: int) -> str:
    mb = count / 2**20
    return f"{mb:,.0f}" if mb >= 10 else f"{mb:.2g}"


def check_prompt(handle, prompt: str) -> Estimate:
    """The prompt box's check: the lightest verb's estimate for this prompt on the handle's model."""
    tokens = len(handle.tokenizer(prompt)["input_ids"])
    return check_budget(handle.model, tokens)
