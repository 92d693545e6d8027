"""Base vs. reasoning model: where the two disagree, and what a one-token intervention there recovers (the
reasoning adapter they load is trained by training/adapter.py, outside the product).

Public face (the page and other callers import from here): `analyze`, `trace`, `eopd`, `intervene`, `sweep`,
`sweep_policies`, `learnability` (gradient similarity of unlearnable examples) and their configs; `load_pair` /
`default_reasoning_id`; the signal, divergence and policy registries; `gate_presets`. (`eopd` and `sweep` name the
verbs here; their modules stay importable by path.)
"""
from backend.disagreement.analysis import AnalysisConfig, TraceConfig, analyze, trace
from backend.disagreement.calibration import CalibrationConfig, GateConfig
from backend.disagreement.divergences import DIVERGENCES, SIGNALS
from backend.disagreement.eopd import EopdConfig, EopdParams, eopd
from backend.disagreement.guided import InterveneConfig, intervene
from backend.disagreement.learnability import CATEGORIES, LearnabilityConfig, learnability
from backend.disagreement.pair import default_reasoning_id, load_pair
from backend.disagreement.policies import POLICIES, sweep_policies
from backend.disagreement.presets import gate_presets
from backend.disagreement.rollout import ProblemSet
from backend.disagreement.sweep import SweepConfig, latest_sweep, sweep

__all__ = ["CATEGORIES", "DIVERGENCES", "POLICIES", "SIGNALS", "AnalysisConfig", "CalibrationConfig", "EopdConfig",
           "EopdParams", "GateConfig", "InterveneConfig", "LearnabilityConfig", "ProblemSet", "SweepConfig",
           "TraceConfig", "analyze", "default_reasoning_id", "eopd", "gate_presets", "intervene", "latest_sweep",
           "learnability", "load_pair", "sweep", "sweep_policies", "trace"]
