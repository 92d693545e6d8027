"""Intervention decoding: the base model decodes, the reasoning model takes over single tokens.

Both models always see the same prefix: one `kernel.decode` over the base model's decoder, with the
reasoning model's decoder as its follower (`kernel.follow`). A policy whose gate needs both
distributions at every step (e.g. cross-entropy) reads the follower every step, so it is stepped
every step; one that gates on the base alone (base-entropy gate, random and earliest-position
controls) reads it only when it takes over, and the follower catches up in one forward then.

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
from backend.models.kernel import Decoded, decode, follow, log_probs, start


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


@dataclass(frozen=True)
class Intervened:
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


@dataclass
class Steps:
    """What a policy recorded for one row at each of its steps (the kernel's stop token included)."""

    taken: list[bool] = field(default_factory=list)
    signals: list[float] = field(default_factory=list)
    base_top: list[int] = field(default_factory=list)  # the base model's greedy token

    def add(self, take: bool, s: float, base_top: int) -> None:
        self.taken.append(take)
        self.signals.append(s)
        self.base_top.append(base_top)

    def result(self, out: Decoded, row: int, base_passes: int, reasoning_passes: int) -> Intervened:
        """The row as the kernel ended it: a stop token is cut from the arrays and flagged when a takeover wrote
        it where the base would not have."""
        ids = out.row(row)
        stopped = bool(out.stopped[row])
        kept = len(ids) - stopped
        return Intervened(token_ids=tuple(ids[:kept]), intervened=np.array(self.taken[:kept], dtype=bool),
                          signal=np.array(self.signals[:kept], dtype=np.float32), base_passes=base_passes,
                          reasoning_passes=reasoning_passes,
                          stop_taken=stopped and self.taken[kept] and self.base_top[kept] != ids[-1])


@torch.no_grad()
def take_over(pair: Pair, prompt: torch.Tensor, policy, max_new_tokens: int, stops: Sequence[int] | None = None,
              fixed_length: bool = False) -> Intervened:
    """Greedy decoding where `policy.decide(t, s_t, differs_t)` picks the model that writes token t: the base
    model's decoder leads, the reasoning model's follows it (`kernel.follow`) and is computed only when read.

    stops: token ids that end the sequence (default: either model's EOS); fixed_length: never stop early
    (benchmarks compare costs at the same output length).
    """
    stop = () if fixed_length else tuple(sorted(pair.stops if stops is None else stops))
    n = room(pair.base, prompt, max_new_tokens)
    base = start(pair.base.model, prompt, max_new_tokens=n)
    reasoning = follow(pair.reasoning.model, max_new_tokens=n)
    steps = Steps()

    def choose(t: int, scores: torch.Tensor) -> torch.Tensor:
        base_logits = scores[0]
        s = float("nan")
        reason_logits = reasoning.logits[0] if policy.eager else None
        if policy.signal is not None:  # a lazy follower's policy gates on base entropy alone
            s = float(signal_value(policy.signal, log_probs(base_logits),
                                   None if reason_logits is None else log_probs(reason_logits)))
        # unknown (lazy follower): treated as differing, so a non-decisive policy decides as before
        differs = True if reason_logits is None else bool(reason_logits.argmax() != base_logits.argmax())
        take = policy.decide(t, s, differs)
        token = int((reasoning.logits[0] if take else base_logits).argmax())
        steps.add(take, s, int(base_logits.argmax()))
        return torch.tensor([token])

    out = decode(base, choose, n, stop, followers=[reasoning])
    return steps.result(out, 0, base.forward_passes, reasoning.forward_passes)
