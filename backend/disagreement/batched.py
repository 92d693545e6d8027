"""Many intervention policies on one prompt at once: one batched cache per model, one row per policy.

The sweep runs every (policy, budget) cell on the same problem; the cells share the prompt, so both
models prefill it once and then step all rows together. On CPU a forward over a handful of rows costs
little more than over one (the weights are read once per step either way), which makes the sweep
several times faster than decoding the cells one by one. Every row sees both distributions at every
step (the reasoning decoder follows the base decoder in the kernel); the kernel pads finished rows and
says which ended on a stop token.
"""
from __future__ import annotations

import torch

from backend.disagreement.divergences import signal_value
from backend.disagreement.intervention import Intervened, Steps
from backend.disagreement.pair import Pair
from backend.disagreement.rollout import room
from backend.models.kernel import decode, follow, log_probs, start


@torch.no_grad()
def take_over_rows(pair: Pair, prompt: torch.Tensor, policies: list, max_new_tokens: int) -> list[Intervened]:
    """Greedy intervention decoding of `prompt` `[1, T]` under each policy (one row each), stopping at EOS."""
    rows = len(policies)
    if rows == 0:
        return []
    n = room(pair.base, prompt, max_new_tokens)
    base = start(pair.base.model, prompt, n=rows, max_new_tokens=n)
    reasoning = follow(pair.reasoning.model, max_new_tokens=n)
    steps = [Steps() for _ in policies]
    needed = {p.signal for p in policies if p.signal is not None}

    def choose(step: int, logits_b: torch.Tensor) -> torch.Tensor:
        logits_r = reasoning.logits
        logp_b, logp_r = log_probs(logits_b), log_probs(logits_r)
        values = {name: signal_value(name, logp_b, logp_r).tolist() for name in needed}
        top_b, top_r = logits_b.argmax(-1), logits_r.argmax(-1)
        differs = (top_b != top_r).tolist()
        live = (~base.finished).tolist()
        feed = top_b.clone()  # a finished row's token is not read: the kernel pads it
        for i, policy in enumerate(policies):
            if not live[i]:
                continue
            s = values[policy.signal][i] if policy.signal is not None else float("nan")
            take = policy.decide(step, s, differs[i])
            if take:
                feed[i] = top_r[i]
            steps[i].add(take, s, int(top_b[i]))
        return feed

    out = decode(base, choose, n, tuple(sorted(pair.stops)), followers=[reasoning])
    return [record.result(out, i, base.forward_passes, reasoning.forward_passes) for i, record in enumerate(steps)]
