"""`python -m backend fp8 bounds|head|simulate|concentration ... --json`."""
from __future__ import annotations

import argparse
import sys

from backend.cli.params import add_flags, flag_values
from backend.fp8.bounds import BoundsConfig, bounds
from backend.fp8.concentration import concentration_curves
from backend.fp8.head import HeadConfig, head
from backend.fp8.simulate import SimulateConfig, simulate
from backend.models import default_model_id, load


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


# field -> flag: the flags keep their historical names where they differ from the field
COMMON_FLAGS = {"method": "--method", "calibration": "--calibration", "fp8_format": "--format", "n_texts": "--texts",
                "max_tokens": "--max-tokens", "seed": "--seed"}
BOUNDS_FLAGS = {"max_iter": "--max-iter", "tol": "--tol", "verify": "--no-verify"}
SIMULATE_FLAGS = {"layer": "--layer", "n_steps": "--steps", "spike_step": "--spike-step",
                  "spike_factor": "--spike-factor", "spike_length": "--spike-length", "history_len": "--history",
                  "margin": "--margin", "drift": "--drift"}


def cmd_bounds(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    config = BoundsConfig(**flag_values(args, BoundsConfig, {**COMMON_FLAGS, **BOUNDS_FLAGS}))
    computed = bounds(handle, config, progress=_progress)
    return {"summary": computed.value.summary(), "layers": computed.value.table(), "config": vars(config),
            "provenance": computed.provenance, "run_id": computed.run_id}


def cmd_head(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    config = HeadConfig(layer=args.layer, head=args.head, bins=args.bins,
                        bounds=BoundsConfig(**flag_values(args, BoundsConfig, {**COMMON_FLAGS, **BOUNDS_FLAGS})))
    computed = head(handle, config, progress=_progress)
    return {**computed.value.summary(), "config": {"layer": config.layer, "head": config.head, "bins": config.bins,
                                                   "bounds": vars(config.bounds)},
            "provenance": computed.provenance, "run_id": computed.run_id}


def cmd_simulate(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    config = SimulateConfig(**flag_values(args, SimulateConfig, {**COMMON_FLAGS, **SIMULATE_FLAGS}))
    computed = simulate(handle, config, progress=_progress)
    out = {"summary": computed.value.summary(), "config": vars(config), "provenance": computed.provenance,
           "run_id": computed.run_id}
    if args.steps_table:
        out["steps"] = computed.value.table()
    return out


def cmd_concentration(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    curves = concentration_curves(handle.info.hidden_size, handle.info.head_dim, args.gamma)
    return {"model": handle.display_name, "d": curves.d, "r": curves.r, "gamma": curves.gamma,
            "exponent_ratio": curves.exponent_ratio, "target_log10": curves.target_log10,
            "alpha_rank_aware": curves.alpha_rank_aware, "alpha_rank_agnostic": curves.alpha_rank_agnostic}


def _common(sub: argparse.ArgumentParser, config: type) -> None:
    sub.add_argument("--model", help="registry id (default: the configured default model)")
    add_flags(sub, config, COMMON_FLAGS)


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("fp8", help="spectral bounds on attention logits and FP8 scale factors")
    actions = parser.add_subparsers(dest="action", required=True)
    sub = actions.add_parser("bounds", help="per-head sigma, per-layer bounds and FP8 scales, observed utilisation")
    _common(sub, BoundsConfig)
    add_flags(sub, BoundsConfig, BOUNDS_FLAGS)
    sub.set_defaults(handler=cmd_bounds)
    sub = actions.add_parser("head", help="one head's bounds beside the histogram of its observed logits")
    _common(sub, BoundsConfig)
    add_flags(sub, BoundsConfig, BOUNDS_FLAGS)
    add_flags(sub, HeadConfig, {"layer": "--layer", "head": "--head", "bins": "--bins"})
    sub.set_defaults(handler=cmd_head)
    sub = actions.add_parser("simulate", help="spike transient: delayed amax-history vs geometry-aware scaling")
    _common(sub, SimulateConfig)
    add_flags(sub, SimulateConfig, SIMULATE_FLAGS)
    sub.add_argument("--steps-table", action="store_true", help="include the per-step table")
    sub.set_defaults(handler=cmd_simulate)
    sub = actions.add_parser("concentration", help="rank-aware vs rank-agnostic tail exponents for the model")
    sub.add_argument("--model")
    sub.add_argument("--gamma", type=float, default=2.0)
    sub.set_defaults(handler=cmd_concentration)
