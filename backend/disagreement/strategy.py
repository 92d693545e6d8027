"""Guided intervention as a strategy of the decoding feature (backend.decoding.registry).

The decoding feature hands over the base model (its selected model) and the encoded prompt; this
adapter pairs it with a reasoning model, calibrates the gate (cached, on base rollouts of training
problems) and decodes greedily with one-token takeovers at high-disagreement steps.
"""
from __future__ import annotations

from backend.decoding.config import DecodeConfig
from backend.decoding.context import DecodeContext
from backend.decoding.registry import StrategySpec
from backend.decoding.result import Outcome
from backend.disagreement.calibration import CalibrationConfig, GateConfig, calibration
from backend.disagreement.intervention import decode
from backend.disagreement.pair import DEFAULT_REASONING_ID, check_pair
from backend.disagreement.rollout import ProblemSet
from backend.disagreement.sweep import policy_for
from backend.errors import UserError
from backend.models import load
from backend.progress import scaled

DEFAULTS = {"reasoning_model": DEFAULT_REASONING_ID, "budget": 0.10, "signal": "ce", "window": 8,
            "calibration_problems": 32}


def _check(config: DecodeConfig) -> None:
    budget = config.option("budget", DEFAULTS["budget"])
    if not isinstance(budget, (int, float)) or not 0 <= budget <= 1:
        raise UserError(f"budget must be a number between 0 and 1, got {budget!r}.")
    GateConfig(config.option("signal", "ce"), int(config.option("window", 8))).check()
    if int(config.option("calibration_problems", 32)) < 1:
        raise UserError("calibration_problems must be at least 1.")


def run_guided(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    pair = check_pair(ctx.handle, load(config.option("reasoning_model", DEFAULTS["reasoning_model"])))
    gate = GateConfig(config.option("signal", "ce"), int(config.option("window", 8)))
    cal_config = CalibrationConfig(ProblemSet(int(config.option("calibration_problems", 32)), "train", 1),
                                   config.max_new_tokens)
    cal = calibration(pair, cal_config, scaled(ctx.progress, 0.0, 0.5))
    budget = float(config.option("budget", DEFAULTS["budget"]))
    ctx.progress(0.5, "guided decoding")
    out = decode(pair, ctx.prompt_ids, policy_for("guided", gate, cal, budget), config.max_new_tokens,
                 stops=ctx.stops)
    stopped = len(out.token_ids) < config.max_new_tokens
    return Outcome(out.token_ids, len(out.token_ids) + int(stopped), out.base_passes + out.reasoning_passes,
                   notes=(f"{out.n_interventions} of {len(out.token_ids)} tokens written by "
                          f"{pair.reasoning.display_name} (rate {out.rate:.1%}, budget {budget:.0%})",))


STRATEGY = StrategySpec("guided", "Guided intervention",
                        "Base model decodes greedily; the reasoning model writes single tokens where the two "
                        "disagree most (calibrated cross-entropy gate).",
                        run_guided, (), dict(DEFAULTS), check=_check)
