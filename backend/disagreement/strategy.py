"""Guided intervention as a strategy of the decoding feature (registered into backend.decoding.registry).

The decoding feature hands over the base model (its selected model) and the encoded prompt; this
adapter pairs it with a reasoning model, calibrates the gate (cached, on base rollouts of training
problems) and decodes greedily with one-token takeovers at high-disagreement steps. Its options
travel in `DecodeConfig.extra`; `GuidedOptions` declares them once (defaults, ranges, help).
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.decoding.config import DecodeConfig
from backend.decoding.context import DecodeContext
from backend.decoding.registry import STRATEGIES, StrategySpec
from backend.decoding.result import Outcome
from backend.disagreement.calibration import CalibrationConfig, GateConfig, calibration
from backend.disagreement.guided import InterveneConfig
from backend.disagreement.intervention import take_over
from backend.disagreement.pair import DEFAULT_REASONING_ID, check_pair
from backend.disagreement.policies import policy_for
from backend.disagreement.rollout import ProblemSet
from backend.models import load
from backend.params import Config, default_of, param, same_as
from backend.progress import scaled

_CALIBRATION = default_of(CalibrationConfig, "problems")  # the train split and seed the gate is calibrated on


@dataclass(frozen=True)
class GuidedOptions(Config):
    reasoning_model: str = param(DEFAULT_REASONING_ID, "registry id of the reasoning model")
    budget: float = same_as(InterveneConfig, "budget")
    signal: str = same_as(GateConfig, "signal")
    window: int = same_as(GateConfig, "window")
    calibration_problems: int = param(_CALIBRATION.n, "training problems the gate is calibrated on", ge=1)

    def gate(self) -> GateConfig:
        return GateConfig(self.signal, int(self.window))

    @staticmethod
    def of(config: DecodeConfig) -> GuidedOptions:
        return GuidedOptions(**config.extra)


def run_guided(ctx: DecodeContext, config: DecodeConfig) -> Outcome:
    options = GuidedOptions.of(config)
    pair = check_pair(ctx.handle, load(options.reasoning_model))
    cal_config = CalibrationConfig(ProblemSet(int(options.calibration_problems), _CALIBRATION.split,
                                              _CALIBRATION.seed), config.max_new_tokens)
    cal = calibration(pair, cal_config, scaled(ctx.progress, 0.0, 0.5))
    budget = float(options.budget)
    ctx.progress(0.5, "guided decoding")
    # the pair's stop ids (either model's), as on the Disagreement page: one guided strategy, one stop rule
    out = take_over(pair, ctx.prompt_ids, policy_for("guided", options.gate(), cal, budget), config.max_new_tokens)
    stopped = len(out.token_ids) < config.max_new_tokens
    return Outcome(token_ids=out.token_ids, tokens_generated=len(out.token_ids) + int(stopped),
                   forward_passes=out.base_passes + out.reasoning_passes,
                   notes=(f"{out.n_interventions} of {len(out.token_ids)} tokens written by "
                          f"{pair.reasoning.display_name} (rate {out.rate:.1%}, budget {budget:.0%})",))


STRATEGIES.register(StrategySpec(
    "guided", "Guided intervention",
    "Base model decodes greedily; the reasoning model writes single tokens where the two disagree most "
    "(calibrated cross-entropy gate).",
    run_guided, options=GuidedOptions))
