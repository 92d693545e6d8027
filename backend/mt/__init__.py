"""Sentence-level MT from a mechanistic perspective: language and translation heads, steering, ablation.

Verbs (all cached in the store): `find_heads` (L x H maps by activation patching and a gradient
attribution), `run_condition` (one generation condition scored with chrF++ and target-language rate),
and the experiments `steer`, `ablate`, `evaluate` built from conditions.
"""
from backend.mt.attribution import ATTRIBUTIONS
from backend.mt.conditions import ConditionConfig, ConditionResult, run_condition
from backend.mt.data import UPLOAD_CAPS, ParallelSet, builtin, language_name, parse_upload
from backend.mt.examples import fit_shots
from backend.mt.experiments import Experiment, ExperimentConfig, ablate, evaluate, run_experiment, steer
from backend.mt.heads import HeadMap, HeadsConfig, find_heads
from backend.mt.presets import steering_presets
from backend.mt.prompts import HEAD_TYPES
from backend.mt.steering import STEER_LAYERS, STEER_MODES, STEER_POSITIONS

__all__ = ["ATTRIBUTIONS", "HEAD_TYPES", "STEER_LAYERS", "STEER_MODES", "STEER_POSITIONS", "UPLOAD_CAPS",
           "ConditionConfig", "ConditionResult", "Experiment", "ExperimentConfig", "HeadMap", "HeadsConfig",
           "ParallelSet", "ablate", "builtin", "evaluate", "find_heads", "fit_shots", "language_name", "parse_upload",
           "run_condition", "run_experiment", "steer", "steering_presets"]
