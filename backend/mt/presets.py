"""Steering settings the MT view opens on: the design measured to work on an embedded model, and the paper's.

The paper's setting (1% of heads, x3, every decoding step, any layer) was found on 7B+ models; on the embedded
models it switches nothing (SmolLM2-135M: 0% French; Gemma-3-270M: one head, 2-4% of the chrF++ gap). The view
opens on the best design the benchmarks measured for the loaded model (README, bench/mt.py and
bench/mt_gemma.py) and keeps the paper's one click away; a model never measured opens on the paper's.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SteeringPreset:
    label: str
    evidence: str  # what was measured with it, shown beside the choice
    percent: float
    strength: float
    steer_mode: str
    steer_positions: str
    steer_layers: str

    def settings(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in ("label", "evidence")}


PAPER = SteeringPreset("Paper's setting", "1% of heads, x3, every step, all layers: the paper's default on 7B+ "
                       "models", 1.0, 3.0, "add", "every-step", "all")

MEASURED = {
    "gemma-3-270m": SteeringPreset(
        "Measured on this model", "2 heads (2.8%), x2, every step, first-half layers: 85% of the chrF++ gap "
        "recovered EN->FR, 109% EN->DE, 87% EN->ES on 24 held-out sentences (chosen among 30 designs on the first "
        "8 EN->FR sentences; bench/mt_gemma.py, README)", 2.8, 2.0, "add", "every-step", "first-half"),
    "smollm2-135m-instruct": SteeringPreset(
        "Measured on this model", "5% of heads, x1, every step: French rate 0.93 of 60 held-out sentences "
        "(the paper's setting: 0.00; bench/mt.py). SmolLM2 writes French, it does not translate",
        5.0, 1.0, "add", "every-step", "all"),
}


def steering_presets(model_id: str) -> list[SteeringPreset]:
    """The presets offered for a model, the one to open on first."""
    return [MEASURED[model_id], PAPER] if model_id in MEASURED else [PAPER]
