"""`python -m backend fp8 bounds|simulate|concentration ... --json`."""
from __future__ import annotations

import argparse
import sys

from backend.fp8.bounds import BoundsConfig, bounds
from backend.fp8.concentration import concentration_curves
from backend.fp8.formats import FORMATS
from backend.fp8.simulate import SimulateConfig, simulate
from backend.fp8.spectral import SIGMA_METHODS
from backend.models import default_model_id, load


def _progress(fraction: float, message: str) -> None:
    print(f"[{fraction:4.0%}] {message}", file=sys.stderr)


def cmd_bounds(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    config = BoundsConfig(method=args.method, max_iter=args.max_iter, tol=args.tol, seed=args.seed,
                          calibration=args.calibration, fp8_format=args.format, verify=not args.no_verify,
                          n_texts=args.texts, max_tokens=args.max_tokens)
    computed = bounds(handle, config, progress=_progress)
    return {"summary": computed.value.summary(), "layers": computed.value.table(), "config": vars(config),
            "provenance": computed.provenance, "run_id": computed.run_id}


def cmd_simulate(args: argparse.Namespace) -> dict:
    handle = load(args.model or default_model_id(), progress=_progress)
    config = SimulateConfig(layer=args.layer, n_steps=args.steps, spike_step=args.spike_step,
                            spike_factor=args.spike_factor, spike_length=args.spike_length,
                            history_len=args.history, margin=args.margin, calibration=args.calibration,
                            drift=args.drift, fp8_format=args.format, method=args.method, n_texts=args.texts,
                            max_tokens=args.max_tokens, seed=args.seed)
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


def _common(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--model", help="registry id (default: the configured default model)")
    sub.add_argument("--method", choices=list(SIGMA_METHODS), default="power", help="how sigma is computed")
    sub.add_argument("--calibration", type=float, default=1.0, help="alpha in scale = fp8_max / (alpha * bound)")
    sub.add_argument("--format", choices=list(FORMATS), default="e4m3")
    sub.add_argument("--texts", type=int, default=4, help="sample texts for observed scores")
    sub.add_argument("--max-tokens", type=int, default=64)
    sub.add_argument("--seed", type=int, default=0)


def add_commands(subparsers) -> None:
    parser = subparsers.add_parser("fp8", help="spectral bounds on attention logits and FP8 scale factors")
    actions = parser.add_subparsers(dest="action", required=True)
    sub = actions.add_parser("bounds", help="per-head sigma, per-layer bounds and FP8 scales, observed utilisation")
    _common(sub)
    sub.add_argument("--max-iter", type=int, default=500)
    sub.add_argument("--tol", type=float, default=1e-6)
    sub.add_argument("--no-verify", action="store_true", help="skip the exact QR + small SVD check")
    sub.set_defaults(handler=cmd_bounds)
    sub = actions.add_parser("simulate", help="spike transient: delayed amax-history vs geometry-aware scaling")
    _common(sub)
    sub.add_argument("--layer", type=int, default=0)
    sub.add_argument("--steps", type=int, default=40)
    sub.add_argument("--spike-step", type=int, default=20)
    sub.add_argument("--spike-factor", type=float, default=4.0, help="multiplies q and k (logits x factor^2)")
    sub.add_argument("--spike-length", type=int, default=1)
    sub.add_argument("--history", type=int, default=16, help="amax history length of delayed scaling")
    sub.add_argument("--margin", type=int, default=0, help="delayed scaling margin (powers of two)")
    sub.add_argument("--drift", type=float, default=0.02)
    sub.add_argument("--steps-table", action="store_true", help="include the per-step table")
    sub.set_defaults(handler=cmd_simulate)
    sub = actions.add_parser("concentration", help="rank-aware vs rank-agnostic tail exponents for the model")
    sub.add_argument("--model")
    sub.add_argument("--gamma", type=float, default=2.0)
    sub.set_defaults(handler=cmd_concentration)
