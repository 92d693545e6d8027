"""Gate settings the Disagreement view opens on: the one measured to work on the embedded pair, and the paper's.

On the embedded pair (SmolLM2-135M-Instruct and its arithmetic adapter) the paper's spike rule (W = 8) left guided
intervention at the random control's level; threshold only (W = 0) recovers most of the gap, and the decisive gate
(only steps where the greedy tokens differ) does so with the takeovers that change a token (bench/disagreement.py;
docs/RESULTS.md). The same decisive gate was measured on the base paired with the everyday-arithmetic adapter,
which opens on it too. Any other pair opens on the paper's rule. What each preset was measured to do is data
(backend.results.preset_evidence), shown beside the choice.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from backend.disagreement.pair import DEFAULT_REASONING_ID
from backend.results import preset_evidence

EMBEDDED_PAIR = ("smollm2-135m-instruct", DEFAULT_REASONING_ID)
EVERYDAY_PAIR = ("smollm2-135m-instruct", "smollm2-135m-arith-reasoner-everyday")


@dataclass(frozen=True)
class GatePreset:
    name: str  # names its measured evidence (backend.results.preset_evidence("disagreement", name))
    label: str
    window: int
    capped: bool = False
    decisive: bool = False

    @property
    def evidence(self) -> str:
        """What the rule does and what was measured with it, shown beside the choice."""
        return preset_evidence("disagreement", self.name)


PAPER = GatePreset("paper", "Paper's spike rule (W = 8)", 8)
THRESHOLD_ONLY = GatePreset("threshold_only", "Measured on this pair (W = 0)", 0)
DECISIVE = GatePreset("decisive", "Measured on this pair (W = 0, decisive)", 0, decisive=True)
# the same gate as DECISIVE, with the evidence measured on the everyday-arithmetic pair
DECISIVE_EVERYDAY = replace(DECISIVE, name="decisive_everyday")


def gate_presets(base_id: str, reasoning_id: str) -> list[GatePreset]:
    """The presets offered for a pair, the one to open on first."""
    if (base_id, reasoning_id) == EMBEDDED_PAIR:
        return [DECISIVE, THRESHOLD_ONLY, PAPER]
    if (base_id, reasoning_id) == EVERYDAY_PAIR:
        return [DECISIVE_EVERYDAY, PAPER]
    return [PAPER, THRESHOLD_ONLY, DECISIVE]
