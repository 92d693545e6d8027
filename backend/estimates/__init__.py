"""Estimates that hold: how long a verb's request takes on this machine under the current load, calibrated per
verb and model and updated from every finished run."""
from backend.estimates.expected import Estimate, estimate, from_history, record_finished

__all__ = ["Estimate", "estimate", "from_history", "record_finished"]
