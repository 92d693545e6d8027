"""Decoding strategies side by side: greedy, sampling, low temperature, best-of-n, Metropolis-Hastings
power sampling and adaptive SMC with cache-coherent resampling, one result type for all.

Entry points: `run_one(handle, problem_or_prompt, DecodeConfig(...))`, `run_batch(handle, problems,
settings_for([configs], budgets))`; strategies are listed by the registry `STRATEGIES` (filled by
`backend.features.load_all()`).
"""
from backend.decoding import convexity  # ConvexBench: its own strategies (direct, decomposed)
from backend.decoding.benchmark import StoredBenchmark, stored_benchmark
from backend.decoding.config import DecodeConfig
from backend.decoding.first_view import FIRST_VIEW, AggregateRow, FirstView, aggregate
from backend.decoding.registry import STRATEGIES, StrategySpec
from backend.decoding.result import BatchResult, BatchRow, Candidate, DecodeResult, MHTrace, ParticleTrace
from backend.decoding.run import Setting, prepare, run_batch, run_one, settings_for

__all__ = ["FIRST_VIEW", "STRATEGIES", "convexity", "AggregateRow", "BatchResult", "BatchRow", "Candidate", "DecodeConfig",
           "DecodeResult", "FirstView", "MHTrace", "ParticleTrace", "Setting", "StoredBenchmark", "StrategySpec",
           "aggregate", "prepare", "run_batch", "run_one", "settings_for", "stored_benchmark"]
