"""The `intervene` verb: one problem decoded by one policy at one budget, every takeover marked."""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

import backend.disagreement.calibration as calibration_module
import backend.disagreement.divergences as divergences
import backend.disagreement.gate as gate_module
import backend.disagreement.intervention as intervention
import backend.disagreement.policies as policies
import backend.disagreement.rollout as rollout_module
import backend.disagreement.scoring as scoring
from backend.disagreement.calibration import CalibrationConfig, GateConfig, calibration
from backend.disagreement.gate import Threshold
from backend.disagreement.intervention import take_over
from backend.disagreement.pair import Pair, pair_verb
from backend.disagreement.policies import MATCHED_TO, POLICIES, policy_for
from backend.disagreement.rollout import answer_correct, decode_tokens, prompt_ids, typed_problem
from backend.disagreement.scoring import RolloutConfig
from backend.params import Config, param, same_as
from backend.progress import Progress, scaled, silent
from backend.verbs import Verb


@dataclass(frozen=True)
class InterveneConfig(Config):
    question: str
    answer: int | None = None
    policy: str = param("guided", "takeover policy", choices=POLICIES)
    budget: float = param(0.10, "r: the gate's calibration budget (controls match guided's count)", ge=0, le=1,
                          hint="(e.g. 0.05 for 5%)")
    gate: GateConfig = GateConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    max_new_tokens: int = same_as(RolloutConfig, "max_new_tokens")
    seed: int = param(0, "seed of the random control's positions")


@dataclass(frozen=True)
class InterveneResult:
    policy: str
    budget: float
    threshold: Threshold | None  # None for the controls and references
    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    text: str
    correct: bool | None
    intervened: np.ndarray  # [L] bool: token written by the reasoning model
    signal: np.ndarray  # [L] the gate's signal (NaN when the policy computes none)
    base_passes: int
    reasoning_passes: int
    stop_taken: bool = False  # the reasoning model ended the answer at a takeover (not in the rate)

    @property
    def rate(self) -> float:
        return float(self.intervened.mean()) if len(self.token_ids) else 0.0


def compute_intervene(pair: Pair, config: InterveneConfig, progress: Progress = silent) -> InterveneResult:
    problem = typed_problem(config.question, config.answer)
    cal = calibration(pair, config.calibration, scaled(progress, 0.0, 0.7))
    prompt = prompt_ids(pair.base, problem)
    count = length = 0
    if POLICIES.get(config.policy).matched:
        progress(0.7, f"{MATCHED_TO} run (for the matched count)")
        ref = take_over(pair, prompt, policy_for(MATCHED_TO, config.gate, cal, config.budget), config.max_new_tokens)
        count, length = ref.n_interventions, len(ref.token_ids)
    progress(0.85, f"{config.policy} decoding")
    policy = policy_for(config.policy, config.gate, cal, config.budget, count, length,
                        np.random.default_rng(config.seed))
    out = take_over(pair, prompt, policy, config.max_new_tokens)
    text, pieces = decode_tokens(pair.base, list(out.token_ids))
    return InterveneResult(policy=config.policy, budget=config.budget,
                           threshold=getattr(policy, "threshold", None), token_ids=out.token_ids, tokens=pieces,
                           text=text, correct=answer_correct(problem, text), intervened=out.intervened,
                           signal=out.signal, base_passes=out.base_passes, reasoning_passes=out.reasoning_passes,
                           stop_taken=out.stop_taken)


# the takeover machinery: calibration (on cached rollouts), the gate, the policies and the takeover loop
TAKEOVER_READS = (calibration_module, gate_module, intervention, policies, rollout_module, scoring, divergences)

intervene: Verb[InterveneConfig, InterveneResult] = pair_verb(
    "intervene", InterveneConfig, compute_intervene, "one problem decoded by one policy at one budget, every "
    "takeover marked", reads=(sys.modules[__name__], *TAKEOVER_READS))
