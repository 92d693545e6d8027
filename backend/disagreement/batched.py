"""Many intervention policies on one prompt at once: one batched cache per model, one row per policy.

The sweep runs every (policy, budget) cell on the same problem; the cells share the prompt, so both
models prefill it once and then step all rows together. On CPU a forward over a handful of rows costs
little more than over one (the weights are read once per step either way), which makes the sweep
several times faster than decoding the cells one by one. Every row sees both distributions at every
step; a finished row keeps receiving a stop token, and its output is cut there.
"""
from __future__ import annotations

import numpy as np
import torch

from backend.disagreement.divergences import signal_value
from backend.disagreement.intervention import Decoded
from backend.disagreement.pair import Pair
from backend.disagreement.rollout import room
from backend.models.kernel import decode, log_probs, start


@torch.no_grad()
def decode_rows(pair: Pair, prompt: torch.Tensor, policies: list, max_new_tokens: int) -> list[Decoded]:
    """Greedy intervention decoding of `prompt` `[1, T]` under each policy (one row each), stopping at EOS."""
    rows = len(policies)
    if rows == 0:
        return []
    stops = tuple(sorted(pair.stops))
    n = room(pair.base, prompt, max_new_tokens)
    base = start(pair.base.model, prompt, n=rows, max_new_tokens=n)
    reason = start(pair.reasoning.model, prompt, n=rows, max_new_tokens=n)
    out: list[list[int]] = [[] for _ in policies]
    taken: list[list[bool]] = [[] for _ in policies]
    signals: list[list[float]] = [[] for _ in policies]
    stop_taken = [False] * rows

    def choose(step: int, logits_b: torch.Tensor) -> torch.Tensor:
        # the reasoning rows catch up with the token the base rows were fed last step (pads included)
        logits_r = reason.step(base.tokens[:, -1]) if step > 0 else reason.logits
        logp_b, logp_r = log_probs(logits_b), log_probs(logits_r)
        needed = {p.signal for p in policies if p.signal is not None}
        values = {name: signal_value(name, logp_b, logp_r).tolist() for name in needed}
        differs = (logits_b.argmax(-1) != logits_r.argmax(-1)).tolist()
        done = base.finished.tolist()
        feed = []
        for i, policy in enumerate(policies):
            if done[i]:
                feed.append(0)  # the kernel feeds a finished row its pad token
                continue
            s = values[policy.signal][i] if policy.signal is not None else float("nan")
            take = policy.decide(step, s, differs[i])
            token = int((logits_r[i] if take else logits_b[i]).argmax())
            feed.append(token)
            if token in stops:
                stop_taken[i] = take and int(logits_b[i].argmax()) != token
                continue
            out[i].append(token)
            taken[i].append(take)
            signals[i].append(s)
        return torch.tensor(feed)

    decode(base, choose, n, stops)
    return [Decoded(token_ids=tuple(o), intervened=np.array(t, dtype=bool), signal=np.array(s, dtype=np.float32),
                    base_passes=base.forward_passes, reasoning_passes=reason.forward_passes, stop_taken=st)
            for o, t, s, st in zip(out, taken, signals, stop_taken)]
