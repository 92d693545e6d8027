"""Rank-aware spectral bounds on attention logits and geometry-aware FP8 scale factors.

bounds.py (per-head sigma of W_Q W_K^T, bounds, per-layer scales, observed utilisation), simulate.py
(spike transient: delayed vs geometry-aware scaling), concentration.py (rank-aware vs rank-agnostic tails);
spectral.py holds the sigma methods, geometry.py the folded factors, observed.py the measured logits.
"""
from backend.fp8.bounds import BoundsConfig, BoundsResult, bounds
from backend.fp8.concentration import ConcentrationCurves, concentration_curves
from backend.fp8.formats import FORMATS
from backend.fp8.simulate import SimulateConfig, SimulateResult, simulate
from backend.fp8.spectral import SIGMA_METHODS

__all__ = ["FORMATS", "SIGMA_METHODS", "BoundsConfig", "BoundsResult", "ConcentrationCurves", "SimulateConfig",
           "SimulateResult", "bounds", "concentration_curves", "simulate"]
