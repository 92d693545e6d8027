"""How much work a verb's request is, in the verb's own units (tokens generated x rows, prompts x forwards, ...),
and how many calibration probes (one short forward of the model, `backend.estimates.calibrate`) one unit costs.

A feature declares it beside its verbs, in its own work modules (its Feature's `work`), apart from the
modules its verbs read: a work declaration is no part of any result, so it must not change a code version. A verb
without a declaration counts 1 unit per request, worth DEFAULT_PROBES_PER_UNIT probes until it ran here once.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_PROBES_PER_UNIT = 100.0


@dataclass(frozen=True)
class Work:
    """units(subject, config) -> the request's size (> 0); probes_per_unit: what one unit costs in calibration
    probes (fitted with bench/fit_probes.py: a run's CPU time per unit over a probe's, side by side);
    first_run_units: what the verb's first run in a process costs beyond a warm one, in units (lazy imports,
    data read once, kernels set up for new shapes; also fitted with bench/fit_probes.py)."""

    units: Callable[[Any, Any], float]
    probes_per_unit: float
    first_run_units: float = 0.0


_WORK: dict[tuple[str, str], Work] = {}


def declare_work(feature: str, action: str, units: Callable[[Any, Any], float], probes_per_unit: float,
                 first_run_units: float = 0.0) -> None:
    _WORK[(feature, action)] = Work(units, probes_per_unit, first_run_units)


def _one(subject: Any, config: Any) -> float:
    return 1.0


def work_of(feature: str, action: str) -> Work:
    """The declared work of a verb (its feature's declarations are imported with its verbs)."""
    import importlib

    from backend.features import FEATURES

    for declared in (f for f in FEATURES if f.name == feature):
        for module in declared.work_modules:
            importlib.import_module(module)
    return _WORK.get((feature, action), Work(_one, DEFAULT_PROBES_PER_UNIT))
