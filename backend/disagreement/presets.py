"""Gate settings the Disagreement view opens on: the one measured to work on the embedded pair, and the paper's.

On the embedded pair (SmolLM2-135M-Instruct and its arithmetic adapter) the paper's spike rule (W = 8) kept
takeovers under 10% and guided intervention at the random control's level (1-4%, first adapter); threshold
only (W = 0) recovers most of the gap, and the decisive gate (only steps where the greedy tokens differ)
reaches it with the takeovers that change a token: 46% at r = 20% (realised rate 22%) against 14% for as
many random ones (README; bench/results/disagreement_decisive.json). The same decisive gate was measured on the
base paired with adapter attempt 6 (bench/results/disagreement_decisive_everyday.json), which opens on it too.
Any other pair opens on the paper's rule.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from backend.disagreement.pair import DEFAULT_REASONING_ID

EMBEDDED_PAIR = ("smollm2-135m-instruct", DEFAULT_REASONING_ID)
EVERYDAY_PAIR = ("smollm2-135m-instruct", "smollm2-135m-arith-reasoner-everyday")  # adapter attempt 6


@dataclass(frozen=True)
class GatePreset:
    label: str
    evidence: str
    window: int
    capped: bool = False
    decisive: bool = False


PAPER = GatePreset("Paper's spike rule (W = 8)", "The paper's rule: a token fires when its signal is over τ and λ "
                   "times its mean over the previous W = 8 tokens. On the embedded pair with the first adapter: "
                   "guided 1-4%, like random.", 8)
THRESHOLD_ONLY = GatePreset(
    "Measured on this pair (W = 0)", "Threshold only (W = 0): on 50 held-out problems (base 0%, reasoning 66%) guided "
    "reaches 46% at r = 20% (realised rate 37%) and 12% at r = 10% (22%), random positions 4% and 2% with as many "
    "takeovers. With the online cap (realised rate at most r) guided gets 8% at a realised 17%.", 0)


DECISIVE = GatePreset(
    "Measured on this pair (W = 0, decisive)", "Threshold only, and only at steps where the two greedy tokens "
    "differ (a takeover that writes the base's own token is neither made nor counted). On 50 held-out problems "
    "(base 0%, reasoning 66%) guided reaches 46% at r = 20% (realised rate 22.5%) and 32% at r = 15% (21.5%); as "
    "many takeovers at random positions give 14% and 8%, at the first differing positions 46% and 36%.", 0,
    decisive=True)


# the same gate as DECISIVE, with the evidence measured on attempt 6's pair
DECISIVE_EVERYDAY = replace(
    DECISIVE, evidence="Threshold only, and only at steps where the two greedy tokens differ. On 50 held-out problems "
    "(base 2%, reasoning 78%, 128 new tokens) guided reaches 44% at r = 20% (realised rate 30.7%) and 70% at "
    "r = 30% (31.4%); as many takeovers at random positions give 10% and 6%. The realised rate stays above 25%: "
    "along this adapter's own answers the base would write another token at 31% of the steps.")


def gate_presets(base_id: str, reasoning_id: str) -> list[GatePreset]:
    """The presets offered for a pair, the one to open on first."""
    if (base_id, reasoning_id) == EMBEDDED_PAIR:
        return [DECISIVE, THRESHOLD_ONLY, PAPER]
    if (base_id, reasoning_id) == EVERYDAY_PAIR:
        return [DECISIVE_EVERYDAY, PAPER]
    return [PAPER, THRESHOLD_ONLY, DECISIVE]
