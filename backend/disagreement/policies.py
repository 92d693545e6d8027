"""Intervention policies, registered by name: the sweep, the `intervene` verb, the CLI and the page list them here.

A policy decides, step by step, which model writes the next token. `run(PolicyInputs)` builds a fresh
policy object (they keep per-sequence state). Flags say how a caller must prepare it:
  matched:   a control that takes over exactly as many tokens as guided did on the same problem, so
             the caller decodes guided first (`MATCHED_TO`) and passes its count and length (with a
             decisive gate, the control's takeovers also wait for steps where the greedy tokens differ);
  reference: one model alone, with no budget; the sweep reports references from plain rollouts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.disagreement.calibration import Calibration, GateConfig
from backend.disagreement.intervention import FixedPositions, SignalGate
from backend.variants import Registry, Variant

MATCHED_TO = "guided"  # the policy whose takeover count the matched controls copy


@dataclass(frozen=True)
class PolicyInputs:
    """What a policy may need: the gate, its calibration at `budget`, and guided's count and length."""

    gate: GateConfig
    calibration: Calibration | None
    budget: float
    count: int = 0
    length: int = 0
    rng: np.random.Generator | None = None


@dataclass(frozen=True)
class PolicySpec(Variant):
    matched: bool = False
    reference: bool = False


POLICIES: Registry[PolicySpec] = Registry("disagreement-policies", "policy")


def random_positions(count: int, length: int, rng: np.random.Generator) -> frozenset[int]:
    """`count` distinct positions drawn uniformly from `length` (never more than the length)."""
    count = min(count, length)
    return frozenset(int(i) for i in rng.choice(length, size=count, replace=False)) if count else frozenset()


def earliest_positions(count: int, length: int) -> frozenset[int]:
    return frozenset(range(min(count, length)))


def _signal_gate(signal_of):
    def build(x: PolicyInputs) -> SignalGate:
        signal = signal_of(x.gate)
        return SignalGate(signal, x.calibration.threshold(signal, x.budget, x.gate.decisive), x.gate.window,
                          x.gate.early, x.gate.capped, x.gate.decisive)
    return build


for _spec in (
    PolicySpec("guided", "Guided", "gate on the per-token disagreement signal (both models every step)",
               _signal_gate(lambda gate: gate.signal), GateConfig),
    PolicySpec("entropy", "Entropy-gated",
               "gate on base entropy only; the reasoning model is queried only at gated positions (decisive: at "
               "every step, to know where the greedy tokens differ)",
               _signal_gate(lambda gate: "entropy_base"), GateConfig),
    PolicySpec("random", "Random (matched)", "control: the same number of takeovers at uniformly random positions",
               lambda x: FixedPositions(random_positions(x.count, x.length, x.rng or np.random.default_rng(0)),
                                        decisive=x.gate.decisive),
               matched=True),
    PolicySpec("early", "Earliest (matched)", "control: the same number of takeovers at the earliest positions",
               lambda x: FixedPositions(earliest_positions(x.count, x.length), decisive=x.gate.decisive),
               matched=True),
    PolicySpec("base", "Base alone", "reference: the base model alone",
               lambda x: FixedPositions(frozenset()), reference=True),
    PolicySpec("reasoning", "Reasoning alone", "reference: the reasoning model alone",
               lambda x: FixedPositions(frozenset(), every=True), reference=True),
):
    POLICIES.register(_spec)


def sweep_policies() -> tuple[str, ...]:
    """The policies the budget sweep runs as cells (every one but the references), in registration order."""
    return tuple(p.name for p in POLICIES if not p.reference)


def policy_for(name: str, gate: GateConfig, cal: Calibration | None, budget: float, count: int = 0,
               length: int = 0, rng: np.random.Generator | None = None):
    """A fresh policy object for one sequence (UserError for an unknown name)."""
    return POLICIES.get(name).run(PolicyInputs(gate, cal, budget, count, length, rng))
