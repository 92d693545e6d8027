"""Token-level sampling shared by all strategies: the kernel's softmax and draws (backend.models.kernel), nothing else.

The proposal q of a run is exactly `softmax(logits / temperature)` over the full vocabulary: no
top-k, top-p or repetition penalty, and `model.generate` is never called, so generation_config
defaults cannot leak into q (the SMC and MH weights depend on q being what was sampled from).
The kernel feeds finished rows a pad token so the batch stays rectangular; their log-probs are 0.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from backend.models.kernel import decode, draw, greedy_policy, log_probs, start  # the kernel's one sampler


@dataclass
class Rollout:
    """N sequences sampled side by side. Per-token arrays are `[N, steps]`, 0 after a row's stop token."""

    tokens: torch.Tensor  # [N, steps] sampled ids (stop token included; padding after it)
    log_p: torch.Tensor  # [N, steps] base log-probabilities log p(x_t | x_<t) (temperature 1)
    log_q: torch.Tensor  # [N, steps] proposal log-probabilities (what was sampled from)
    lengths: torch.Tensor  # [N] tokens up to and including the stop token
    forward_passes: int
    stopped: torch.Tensor  # [N] bool: the row ended on a stop token (the kernel's record)

    def row(self, i: int) -> list[int]:
        return self.tokens[i, : int(self.lengths[i])].tolist()

    @property
    def tokens_generated(self) -> int:
        return int(self.lengths.sum())


@torch.no_grad()
def rollout(model, context_ids: torch.Tensor, n: int, temperature: float, max_new_tokens: int,
            stops: tuple[int, ...], generator: torch.Generator | None, stop_at_eos: bool = True,
            on_step: Callable[[int], None] | None = None, precision: str = "reference") -> Rollout:
    """Sample n continuations of `context_ids` `[1, T]` at `temperature` (greedy when generator is None).

    The context is prefilled once and its cache broadcast to the n rows (the kernel's decoder).
    """
    decoder = start(model, context_ids, n=n, max_new_tokens=max_new_tokens, precision=precision)
    if generator is None:  # greedy has no proposal (log q recorded as 0): the kernel's checked chunks may serve it
        out = decode(decoder, greedy_policy, max_new_tokens, stops, stop_at_eos=stop_at_eos, on_step=on_step,
                     speculate=True)
        return Rollout(tokens=out.tokens, log_p=out.log_p, log_q=torch.zeros_like(out.log_p), lengths=out.lengths,
                       forward_passes=out.forward_passes, stopped=out.stopped)
    lqs = []

    def policy(t: int, logits: torch.Tensor) -> torch.Tensor:
        log_q = log_probs(logits, temperature)
        x = draw(log_q, generator)
        lqs.append(log_q.gather(1, x[:, None]).view(-1) * (~decoder.finished).float())
        return x

    out = decode(decoder, policy, max_new_tokens, stops, stop_at_eos=stop_at_eos, on_step=on_step)
    return Rollout(tokens=out.tokens, log_p=out.log_p, log_q=torch.stack(lqs, 1).cpu(), lengths=out.lengths,
                   forward_passes=out.forward_passes, stopped=out.stopped)
