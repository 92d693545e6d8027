"""The contract of every registered intervention policy on the tiny pair (a new policy is tested by being
registered): a fresh object per sequence that decodes; references and controls do what their flags say."""
import numpy as np
import pytest

from backend.disagreement.calibration import Calibration, GateConfig
from backend.disagreement.divergences import SIGNALS
from backend.disagreement.intervention import take_over
from backend.disagreement.pair import load_pair
from backend.disagreement.policies import MATCHED_TO, POLICIES, PolicyInputs, policy_for, sweep_policies
from backend.disagreement.rollout import prompt_ids, typed_problem
from backend.errors import UserError

PROBLEM = typed_problem("Ava has 3 apples and gets 4 more. How many now?", 7)
N = 16
COUNT = 5  # the matched controls' takeovers
# a hand-made calibration: every signal spread evenly over [0, 7] nats (tiny models sit near 5.5 nats),
# and a threshold-only gate, so the gated policies take over on the tiny pair
CAL = Calibration(1, {name: np.linspace(0.0, 7.0, 401) for name in SIGNALS.names()})
GATE = GateConfig(window=0)


@pytest.fixture(scope="module")
def pair():
    return load_pair("tiny-llama", "tiny-qwen2")


@pytest.fixture(scope="module")
def runs(pair):
    """Every policy decoded once at budget 0.3 (the controls told to take COUNT tokens over N)."""
    prompt = prompt_ids(pair.base, PROBLEM)
    return {spec.name: take_over(pair, prompt, spec.run(PolicyInputs(GATE, CAL, 0.3, COUNT, N,
                                                                  np.random.default_rng(0))), N)
            for spec in POLICIES}


@pytest.mark.parametrize("name", POLICIES.names())
def test_every_policy_decodes_with_a_fresh_object(name, runs, pair):
    spec, decoded = POLICIES.get(name), runs[name]
    assert 1 <= len(decoded.token_ids) <= N
    assert decoded.intervened.shape == decoded.signal.shape == (len(decoded.token_ids),)
    assert decoded.base_passes >= 1
    inputs = PolicyInputs(GATE, CAL, 0.3, COUNT, N)
    first, second = spec.run(inputs), spec.run(inputs)
    assert first is not second and callable(first.decide)  # policies keep per-sequence state
    assert (name in sweep_policies()) == (not spec.reference)
    if spec.matched:  # a control takes exactly the count it was given (within the output)
        assert decoded.n_interventions == min(COUNT, len(decoded.token_ids))
    if not spec.matched and not spec.reference:  # a gated policy: budget 0 never takes over, 0.3 does here
        zero = take_over(pair, prompt_ids(pair.base, PROBLEM), policy_for(name, GATE, CAL, 0.0), N)
        assert zero.n_interventions == 0 and decoded.n_interventions > 0


def test_references_are_one_model_alone(runs, pair):
    assert runs["base"].n_interventions == 0 and runs["base"].reasoning_passes == 0
    assert runs["reasoning"].intervened.all()
    alone = take_over(pair, prompt_ids(pair.base, PROBLEM), policy_for("base", GATE, None, 0.0), N)
    assert alone.token_ids == runs["base"].token_ids != runs["reasoning"].token_ids


def test_controls_are_matched_to_guided_and_early_takes_the_first_positions(runs):
    assert not POLICIES.get(MATCHED_TO).matched and not POLICIES.get(MATCHED_TO).reference
    assert {s.name for s in POLICIES if s.matched} >= {"random", "early"}
    early = runs["early"].intervened
    assert early[:COUNT].all() and not early[COUNT:].any()
    assert sorted(runs["random"].intervened.nonzero()[0]) != list(range(COUNT))  # seeded, not the first ones


def test_unknown_policy_is_a_user_error_listing_the_known_ones():
    with pytest.raises(UserError, match="Unknown policy 'bogus'; choose one of guided, entropy"):
        policy_for("bogus", GATE, CAL, 0.1)


def test_a_decisive_gate_reaches_every_policy(pair):
    """With `decisive`, the gated policies and the matched controls all carry the flag (the calibration then
    needs the base rollouts' `differs` flags)."""
    cal = Calibration(1, {**CAL.signals, "differs": (np.arange(401) % 2).astype(np.float32)})
    gate = GateConfig(window=0, decisive=True)
    for spec in POLICIES:
        policy = spec.run(PolicyInputs(gate, cal, 0.3, COUNT, N, np.random.default_rng(0)))
        assert getattr(policy, "decisive", False) == (not spec.reference), spec.name
    guided = policy_for("guided", gate, cal, 0.3)
    assert guided.threshold.tau < CAL.threshold("ce", 0.3).tau, "half the positions eligible: a lower threshold"
    prompt = prompt_ids(pair.base, PROBLEM)
    for name in ("random", "early"):  # the tiny pair's greedy tokens differ at every step: the count is kept
        out = take_over(pair, prompt, policy_for(name, gate, cal, 0.3, COUNT, N, np.random.default_rng(0)), N)
        assert out.n_interventions == min(COUNT, len(out.token_ids))
