"""Sentence-level MT from a mechanistic perspective: language and translation heads, steering, ablation.

Verbs (all cached in the store): `find_heads` (L x H maps by activation patching and a gradient
attribution), `run_condition` (one generation condition scored with chrF++ and target-language rate),
and the experiments `steer`, `ablate`, `evaluate` built from conditions.
"""
from backend.mt.conditions import ConditionConfig, ConditionResult, run_condition
from backend.mt.data import ParallelSet, builtin, parse_upload
from backend.mt.experiments import Experiment, ExperimentConfig, ablate, evaluate, run_experiment, steer
from backend.mt.heads import HeadMap, HeadsConfig, find_heads

__all__ = ["ConditionConfig", "ConditionResult", "Experiment", "ExperimentConfig", "HeadMap", "HeadsConfig",
           "ParallelSet", "ablate", "builtin", "evaluate", "find_heads", "parse_upload", "run_condition",
           "run_experiment", "steer"]
