"""Intervention decoding: the base model decodes, the reasoning model takes over single tokens.

Both models always see the same prefix. The base decoder steps every token. The reasoning decoder
(`Follower`) is either kept in step with it (policies whose gate needs both distributions at every
step, e.g. cross-entropy) or left behind and caught up in one chunk only when it is asked for a
token (base-entropy gate, random and earliest-position controls): its first query prefills prompt
and generated text together, later ones `extend` by the tokens it missed.

A decisive policy takes over only where the two models' greedy tokens differ (`differs`): a takeover
that writes the base's own token changes nothing, so it is neither made nor counted. Such a policy
needs the reasoning model's token at every step, so its follower is kept in step.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from backend.disagreement.divergences import signal_value
from backend.disagreement.gate import Threshold, gate
from backend.disagreement.pair import Pair
from backend.disagreement.rollout import room
from backend.models.decoding import IncrementalDecoder
from backend.models.kernel import decode as kernel_decode, log_probs, start


@dataclass
class SignalGate:
    """Decides from a per-step signal; keeps the signal history of the current sequence."""

    signal: str
    threshold: Threshold
    window: int = 8
    early: str = "partial"
    capped: bool = False  # at most max(1, r·(t+1)) takeovers by step t, r = threshold.budget
    decisive: bool = False  # fire only where the two greedy tokens differ
    history: list[float] = field(default_factory=list)
    taken: int = 0

    @property
    def eager(self) -> bool:
        return self.decisive or self.signal != "entropy_base"

    def decide(self, t: int, s: float, differs: bool = True) -> bool:
        passes = gate(s, self.history, self.threshold, self.window, self.early) and (differs or not self.decisive)
        self.history.append(s)
        if passes and self.capped and not self.threshold.is_always:
            passes = self.taken + 1 <= max(1.0, self.threshold.budget * (t + 1))
        self.taken += passes
        return passes


@dataclass
class FixedPositions:
    """Takes over exactly at the given step indices (controls and the two references).

    decisive: a takeover due at a step where the two greedy tokens agree waits for the next step where
    they differ, so the control changes as many tokens as it is given positions (while the output lasts),
    like a decisive guided gate with that count.
    """

    positions: frozenset[int]
    every: bool = False  # True: every step (the reasoning model alone)
    decisive: bool = False
    signal: str | None = None
    pending: int = 0

    @property
    def eager(self) -> bool:
        return self.decisive

    def decide(self, t: int, s: float, differs: bool = True) -> bool:
        if self.every:
            return True
        if not self.decisive:
            return t in self.positions
        self.pending += t in self.positions
        if self.pending and differs:
            self.pending -= 1
            return True
        return False


class Follower:
    """The reasoning model's decoder, synchronised with the shared prefix only when read."""

    def __init__(self, model, prompt: torch.Tensor):
        self.decoder = IncrementalDecoder(model)  # the kernel's decoder, prefilled lazily
        self.prompt = prompt
        self.synced = -1  # generated tokens already in the cache; -1: not prefilled yet

    def logits(self, generated: Sequence[int]) -> torch.Tensor:
        """Next-token logits `[V]` after prompt + generated."""
        if self.synced < 0:
            ids = torch.cat([self.prompt, torch.tensor([list(generated)], dtype=self.prompt.dtype)], dim=1)
            self.decoder.prefill(ids)
        elif self.synced < len(generated):
            self.decoder.extend(torch.tensor([list(generated[self.synced:])]))
        self.synced = len(generated)
        return self.decoder.logits[0]


@dataclass(frozen=True)
class Decoded:
    """One intervention-decoded sequence. Arrays are `[L]` over generated tokens (EOS excluded)."""

    token_ids: tuple[int, ...]
    intervened: np.ndarray  # bool
    signal: np.ndarray  # the gate's signal at each step, NaN where none was computed
    base_passes: int
    reasoning_passes: int
    # the sequence ended at a takeover: the reasoning model wrote the stop token where the base would have
    # written something else. Not in `intervened` (which covers generated tokens), so not in the rate.
    stop_taken: bool = False

    @property
    def n_interventions(self) -> int:
        return int(self.intervened.sum())

    @property
    def rate(self) -> float:
        return float(self.intervened.mean()) if len(self.token_ids) else 0.0


@torch.no_grad()
def decode(pair: Pair, prompt: torch.Tensor, policy, max_new_tokens: int, stops: Sequence[int] | None = None,
           fixed_length: bool = False) -> Decoded:
    """Greedy decoding where `policy.decide(t, s_t, differs_t)` picks the model that writes token t.

    stops: token ids that end the sequence (default: either model's EOS); fixed_length: never stop early
    (benchmarks compare costs at the same output length).
    """
    stop = () if fixed_length else tuple(sorted(pair.stops if stops is None else stops))
    n = room(pair.base, prompt, max_new_tokens)
    base = start(pair.base.model, prompt, max_new_tokens=n)
    follower = Follower(pair.reasoning.model, prompt)
    out: list[int] = []
    taken: list[bool] = []
    signals: list[float] = []
    stop_taken = False

    def choose(t: int, scores: torch.Tensor) -> torch.Tensor:
        nonlocal stop_taken
        base_logits = scores[0]
        s = float("nan")
        reason_logits = follower.logits(out) if policy.eager else None
        if policy.signal is not None:  # a lazy follower's policy gates on base entropy alone
            s = float(signal_value(policy.signal, log_probs(base_logits),
                                   None if reason_logits is None else log_probs(reason_logits)))
        # unknown (lazy follower): treated as differing, so a non-decisive policy decides as before
        differs = True if reason_logits is None else bool(reason_logits.argmax() != base_logits.argmax())
        take = policy.decide(len(out), s, differs)
        token = int((follower.logits(out) if take else base_logits).argmax())
        if token in stop:
            stop_taken = take and int(base_logits.argmax()) != token
        else:
            out.append(token)
            taken.append(take)
            signals.append(s)
        return torch.tensor([token])

    kernel_decode(base, choose, n, stop)
    return Decoded(token_ids=tuple(out), intervened=np.array(taken, dtype=bool),
                   signal=np.array(signals, dtype=np.float32), base_passes=base.forward_passes,
                   reasoning_passes=follower.decoder.forward_passes, stop_taken=stop_taken)
