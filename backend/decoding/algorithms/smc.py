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
from backend.models.decoding import IncrementalDecoder


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
              on_step: Callable[[int], None] | None = None, keep_decoder: bool = False) -> Round:
    resample = RESAMPLERS[resampler]
    decoder = IncrementalDecoder(model)
    logits = decoder.prefill(prompt_ids, n=n)
    passes, dev = 0, logits.device
    stop = torch.tensor(stops or (-1,), device=dev)
    pad = stops[0] if stops else 0
    log_w = torch.zeros(n, dtype=torch.float64)
    cum_lp = torch.zeros(n, dtype=torch.float64)
    finished = torch.zeros(n, dtype=torch.bool)
    lengths = torch.zeros(n, dtype=torch.long)
    roots = torch.arange(n)
    tokens = torch.empty(n, 0, dtype=torch.long)
    rec_alpha, rec_ess, rec_res, rec_uniq, rec_lin, genealogy = [], [], [], [], [], []
    prev_alpha = alpha_schedule(alpha, alpha_ramp, 0)
    for t in range(max_new_tokens):
        a_t = alpha_schedule(alpha, alpha_ramp, t)
        if a_t != prev_alpha:  # the target moved from p^prev to p^a_t on the prefix too
            log_w += (a_t - prev_alpha) * cum_lp
            prev_alpha = a_t
        log_p = log_probs(logits)
        log_q = log_probs(logits, 1.0 / a_t)
        x = draw(log_q, generator).cpu()
        x = torch.where(finished, pad, x)
        alive = ~finished
        lp_x = log_p.gather(1, x.to(dev)[:, None]).view(-1).cpu().double()
        lq_x = log_q.gather(1, x.to(dev)[:, None]).view(-1).cpu().double()
        log_w += torch.where(alive, a_t * lp_x - lq_x, 0.0)
        cum_lp += torch.where(alive, lp_x, 0.0)
        lengths += alive.long()
        tokens = torch.cat([tokens, x[:, None]], dim=1)
        if stop_at_eos:
            finished |= torch.isin(x, stop.cpu())
        e = ess(log_w)
        last = t == max_new_tokens - 1 or bool(finished.all())
        parents = torch.arange(n)
        resampled = e < ess_threshold * n and not last
        if resampled:
            parents = resample(log_w, generator)
            tokens, cum_lp, finished, lengths, roots, x = (v[parents] for v in (tokens, cum_lp, finished, lengths,
                                                                                roots, x))
            log_w = reset_weights(log_w)
            if cache == "reorder":
                decoder.reorder(parents)
        rec_alpha.append(a_t)
        rec_ess.append(e)
        rec_res.append(resampled)
        rec_uniq.append(len(torch.unique(parents)))
        rec_lin.append(len(torch.unique(roots)))
        genealogy.append(parents.numpy())
        if on_step is not None:
            on_step(t)
        if last:
            break
        if resampled and cache == "recompute":  # baseline: re-encode every prefix from scratch
            passes += decoder.forward_passes
            decoder = IncrementalDecoder(model)
            decoder.prefill(prompt_ids, n=n)
            logits = decoder.extend(tokens.to(dev))
        else:
            logits = decoder.step(x.to(dev))
    passes += decoder.forward_passes
    trace = ParticleTrace(n, np.array(rec_alpha), np.array(rec_ess), np.array(rec_res, dtype=bool),
                          np.array(rec_uniq, dtype=np.int64), np.array(rec_lin, dtype=np.int64),
                          np.stack(genealogy).astype(np.int64), log_w.numpy().copy(), int(lengths.sum()))
    rows = [tokens[i, : int(lengths[i])].tolist() for i in range(n)]
    return Round(rows, log_w, trace, passes, decoder if keep_decoder else None)
