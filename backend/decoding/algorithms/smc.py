"""One round of sequential Monte Carlo on p(x)^alpha with cache-coherent resampling.

Per generated token x_t ~ q = softmax(logits * alpha_t) (temperature 1/alpha_t), each particle's
log-weight gains

    (alpha_t - alpha_{t-1}) * log p(x_<t) + alpha_t * log p(x_t | x_<t) - log q(x_t | x_<t)

i.e. (alpha - 1) log p + log p - log q, plus the ramp correction when alpha changes. When
ESS < threshold * N the population is resampled and every particle-bound tensor is reordered by
the ancestor index: KV cache rows and the decoder's token buffer and logits (`reorder`), and our
tokens, lengths, cumulative log p, finished flags and first-token ancestors. Nothing is recomputed.
`cache="recompute"` instead rebuilds the cache from the prefixes after each resampling: the slow
baseline the benchmark compares against.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from backend.decoding.resampling import RESAMPLERS, ess, reset_weights
from backend.decoding.result import ParticleTrace
from backend.decoding.sampler import draw, log_probs
from backend.models.incremental import IncrementalDecoder
from backend.models.kernel import decode, start


def alpha_schedule(alpha: float, ramp: int, t: int) -> float:
    """alpha_t for token t (0-based): linear from 1 at the first token to alpha at token `ramp`."""
    if ramp <= 0:
        return alpha
    return 1.0 + (alpha - 1.0) * min(1.0, t / ramp)


@dataclass
class Round:
    rows: list[list[int]]  # final particles' tokens (stop token included)
    log_w: torch.Tensor  # [N] float64 final log-weights
    trace: ParticleTrace
    forward_passes: int
    decoder: IncrementalDecoder | None = None  # the final cache, kept only when asked (tests)


@torch.no_grad()
def smc_round(model, prompt_ids: torch.Tensor, n: int, alpha: float, max_new_tokens: int, stops: tuple[int, ...],
              generator: torch.Generator, ess_threshold: float = 0.5, resampler: str = "systematic",
              alpha_ramp: int = 0, cache: str = "reorder", stop_at_eos: bool = True,
              on_step: Callable[[int], None] | None = None, keep_decoder: bool = False,
              precision: str = "reference") -> Round:
    """The SMC policy over the kernel: draw from p^alpha_t, weight, and resample through the kernel's `select`."""
    resample = RESAMPLERS[resampler]
    decoder = start(model, prompt_ids, n=n, max_new_tokens=max_new_tokens, resample=cache, precision=precision)
    dev = decoder.logits.device
    state = {"log_w": torch.zeros(n, dtype=torch.float64), "prev_alpha": alpha_schedule(alpha, alpha_ramp, 0)}
    cum_lp = torch.zeros(n, dtype=torch.float64)
    roots = torch.arange(n)
    # per step, as ParticleTrace keeps them: alpha, ESS, resampled or not, distinct parents, distinct root lineages,
    # the parents chosen, the drawn tokens, the weights ESS is computed from
    alphas, ess_per_step, resampled_steps, unique_parents, lineages, genealogy = [], [], [], [], [], []
    drawn_tokens, log_weight_history = [], []

    def policy(t: int, logits: torch.Tensor) -> torch.Tensor:
        a_t = alpha_schedule(alpha, alpha_ramp, t)
        if a_t != state["prev_alpha"]:  # the target moved from p^prev to p^a_t on the prefix too
            state["log_w"] += (a_t - state["prev_alpha"]) * cum_lp
            state["prev_alpha"] = a_t
        log_p = log_probs(logits)
        log_q = log_probs(logits, 1.0 / a_t)
        alive = ~decoder.finished.cpu()
        x = draw(log_q, generator).cpu()  # a finished row's token is not read: the kernel pads it
        lp_x = log_p.gather(1, x.to(dev)[:, None]).view(-1).cpu().double()
        lq_x = log_q.gather(1, x.to(dev)[:, None]).view(-1).cpu().double()
        state["log_w"] += torch.where(alive, a_t * lp_x - lq_x, 0.0)
        cum_lp.add_(torch.where(alive, lp_x, 0.0))
        alphas.append(a_t)
        drawn_tokens.append(torch.where(alive, x, -1).numpy().astype(np.int64))
        return x

    def select(t: int, x: torch.Tensor) -> torch.Tensor | None:
        nonlocal cum_lp, roots
        e = ess(state["log_w"])
        log_weight_history.append(state["log_w"].numpy().copy())
        last = t == max_new_tokens - 1 or bool(decoder.finished.all())
        parents = torch.arange(n)
        resampled = e < ess_threshold * n and not last
        if resampled:
            parents = resample(state["log_w"], generator)
            cum_lp, roots = cum_lp[parents], roots[parents]
            state["log_w"] = reset_weights(state["log_w"])
        ess_per_step.append(e)
        resampled_steps.append(resampled)
        unique_parents.append(len(torch.unique(parents)))
        lineages.append(len(torch.unique(roots)))
        genealogy.append(parents.numpy())
        return parents if resampled else None

    out = decode(decoder, policy, max_new_tokens, stops, select=select, stop_at_eos=stop_at_eos, on_step=on_step)
    log_w = state["log_w"]
    trace = ParticleTrace(n=n, alpha=np.array(alphas), ess=np.array(ess_per_step),
                          resampled=np.array(resampled_steps, dtype=bool),
                          unique_parents=np.array(unique_parents, dtype=np.int64),
                          lineages=np.array(lineages, dtype=np.int64), genealogy=np.stack(genealogy).astype(np.int64),
                          log_weights=log_w.numpy().copy(), tokens_generated=int(out.lengths.sum()),
                          tokens=np.stack(drawn_tokens), log_weight_history=np.stack(log_weight_history))
    rows = [out.row(i) for i in range(n)]
    return Round(rows=rows, log_w=log_w, trace=trace, forward_passes=out.forward_passes,
                 decoder=decoder if keep_decoder else None)
