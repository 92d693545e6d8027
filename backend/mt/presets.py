"""Steering settings the MT view opens on: the design measured to work on an embedded model, and the paper's.

The paper's setting was found on 7B+ models and switches little on the embedded ones, so the view opens on the
best design the benchmarks measured for the loaded model (bench/mt.py, bench/mt_gemma.py; docs/RESULTS.md) and
keeps the paper's one click away; a model never measured opens on the paper's. What each preset was measured to
do is data (backend.results.preset_evidence), shown beside the choice.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from backend.results import preset_evidence


@dataclass(frozen=True)
class SteeringPreset:
    name: str  # names its measured evidence (backend.results.preset_evidence("mt", name))
    label: str
    percent: float
    strength: float
    steer_mode: str
    steer_positions: str
    steer_layers: str

    @property
    def evidence(self) -> str:
        """What was measured with it, shown beside the choice."""
        return preset_evidence("mt", self.name)

    def settings(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k not in ("name", "label")}


PAPER = SteeringPreset("paper", "Paper's setting", 1.0, 3.0, "add", "every-step", "all")

MEASURED = {
    "gemma-3-270m": SteeringPreset("gemma-3-270m", "Measured on this model", 2.8, 2.0, "add", "every-step",
                                   "first-half"),
    "smollm2-135m-instruct": SteeringPreset("smollm2-135m-instruct", "Measured on this model", 5.0, 1.0, "add",
                                            "every-step", "all"),
}


def steering_presets(model_id: str) -> list[SteeringPreset]:
    """The presets offered for a model, the one to open on first."""
    return [MEASURED[model_id], PAPER] if model_id in MEASURED else [PAPER]
