"""The contract of every registered decoding strategy on a tiny model (a new one is tested by being
registered), plus caching, selection and the registry's plug-in path."""
import dataclasses

import numpy as np
import pytest

from backend.decoding import STRATEGIES, DecodeConfig, StrategySpec, run_one
from backend.decoding.result import Outcome
from backend.decoding.select import agreement, choose
from backend.models import load
from backend.params import Config, param
from backend.tasks.arithmetic import extract_answer, generate_problems

SMALL = DecodeConfig(max_new_tokens=6, n=3, block_size=3, mh_steps=1, alpha=2.0)
# options a strategy of another feature needs to run on the tiny models (its defaults name real models)
TINY_OPTIONS = {"guided": {"reasoning_model": "tiny-qwen2", "calibration_problems": 2}}
# strategies whose prompts outgrow the tiny models' 256 byte-token context on a generated problem; their own test
# file holds them to the same contract on a short question
OWN_CONTRACT = {"rc": "tests/decoding/test_rc.py (RC's summary request repeats the question)"}
SHORT_OPTIONS = {"rc": {"summary_instruction": "Sum up.", "summary_tokens": 4, "cycles": 2}}


@pytest.fixture(scope="module")
def problem():
    return generate_problems(1, "heldout", seed=0)[0]


def _config(name: str, **changes) -> DecodeConfig:
    return SMALL.replace(strategy=name, extra=TINY_OPTIONS.get(name, {}), **changes)


@pytest.mark.parametrize("name", STRATEGIES.names())
def test_every_strategy_honours_the_contract(name, problem, tmp_path, monkeypatch):
    """Runs, respects max_new_tokens, records what it spent, caches, and is deterministic for a seed."""
    if name in OWN_CONTRACT:
        pytest.skip(f"held to it in {OWN_CONTRACT[name]}")
    handle = load("tiny-llama")
    first = run_one(handle, problem, _config(name, seed=3))
    r = first.value
    assert not first.cached and r.strategy == name and r.expected == problem.answer
    assert isinstance(r.correct, bool) and r.answer == extract_answer(r.output)
    assert 1 <= len(r.token_ids) <= 6 and r.tokens_generated >= len(r.token_ids)
    assert r.forward_passes >= 1 and r.wall_seconds > 0
    assert set(r.summary()) >= {"output", "correct", "tokens_generated", "forward_passes", "wall_seconds"}
    if r.candidates:
        assert abs(sum(c.weight for c in r.candidates) - 1) < 1e-6
    again = run_one(handle, problem, _config(name, seed=3))
    assert again.cached and again.key == first.key and again.value.token_ids == r.token_ids
    monkeypatch.setenv("DASH_STORE", str(tmp_path / "store.duckdb"))  # an empty store: computed afresh
    fresh = run_one(handle, problem, _config(name, seed=3))
    assert not fresh.cached and fresh.value.token_ids == r.token_ids and fresh.key == first.key


@pytest.mark.parametrize("name", ["best_of_n", "asmc", "mh"])
def test_built_in_traces(name, problem):
    r = run_one(load("tiny-llama"), problem, _config(name)).value
    assert (r.particles != ()) == (name == "asmc") and (r.mh is not None) == (name == "mh")
    if name != "mh":
        assert len(r.candidates) == 3


def test_second_request_is_served_from_the_store_and_irrelevant_fields_share_it(problem):
    handle = load("tiny-llama")
    first = run_one(handle, problem, DecodeConfig(strategy="greedy", max_new_tokens=4, alpha=2.0))
    again = run_one(handle, problem, DecodeConfig(strategy="greedy", max_new_tokens=4, alpha=7.0, n=5))
    assert again.cached and again.key == first.key and again.value.output == first.value.output


def test_free_prompt_has_no_checker():
    r = run_one(load("tiny-llama"), "Say hi", DecodeConfig(strategy="best_of_n", max_new_tokens=3, n=2)).value
    assert r.correct is None and r.expected is None
    assert r.answer == extract_answer(r.output)  # read by the problem sets' rule, not judged
    assert "by score" in r.notes[-1]


def test_free_prompt_with_an_expected_answer_is_judged_by_the_problem_sets_rule():
    handle, config = load("tiny-llama"), DecodeConfig(strategy="greedy", max_new_tokens=6)
    plain = run_one(handle, "What is 5 + 7?", config).value
    right = plain.answer if plain.answer is not None else 12
    judged = run_one(handle, "What is 5 + 7?", config, expected=right).value
    assert judged.expected == right and judged.output == plain.output
    assert judged.correct is (plain.answer == right)
    wrong = run_one(handle, "What is 5 + 7?", config, expected=right + 1).value
    assert wrong.correct is False and wrong.answer == plain.answer


def test_adaptive_asmc_grows_within_the_budget(problem):
    cfg = DecodeConfig(strategy="asmc", max_new_tokens=5, n=2, adaptive=True, token_budget=40, max_particles=8)
    r = run_one(load("tiny-llama"), problem, cfg).value
    assert r.tokens_generated <= 40
    sizes = [p.n for p in r.particles]
    assert sizes[0] == 2 and all(b == min(2 * a, 8) or b < 2 * a for a, b in zip(sizes, sizes[1:]))
    assert any("round 1" in note for note in r.notes)


def test_choose_by_vote_and_score():
    scores = np.array([-1.0, -5.0, -4.0, -0.5])
    assert choose(scores, [1, 2, 2, None], "score") == 3
    assert choose(scores, [1, 2, 2, None], "vote") == 2  # answer 2 wins 2:1, best-scoring member
    assert choose(scores, [1, 2, 2, None], "vote", weights=np.array([0.7, 0.1, 0.1, 0.1])) == 0
    assert choose(scores, [None, None, None, None], "vote") == 3
    assert agreement([1, 2, 2, None]) == pytest.approx(0.5)


@dataclasses.dataclass(frozen=True)
class EchoOptions(Config):
    tag: str = param("x", "a note the strategy repeats")


def test_a_new_strategy_plugs_in_with_one_registration():
    def run(ctx, config):
        roll = ctx.rollout(1, 1.0, config.max_new_tokens, greedy=True)
        return Outcome(tuple(roll.row(0)), roll.tokens_generated, roll.forward_passes, notes=(config.option("tag"),))

    STRATEGIES.register(StrategySpec("echo_test", "Echo", "test strategy", run, options=EchoOptions))
    try:
        assert STRATEGIES.get("echo_test").extra_defaults == {"tag": "x"}
        r = run_one(load("tiny-llama"), "hi", DecodeConfig(strategy="echo_test", max_new_tokens=2, extra={"tag": "y"}))
        assert r.value.notes == ("y",) and r.value.config.extra == {"tag": "y"}
        assert run_one(load("tiny-llama"), "hi", DecodeConfig(strategy="echo_test", max_new_tokens=2)).value.notes \
            == ("x",)
    finally:
        STRATEGIES.unregister("echo_test")


def test_no_strategy_calls_model_generate(monkeypatch, problem):
    """q must be exactly our own softmax: generation_config defaults (top-k, penalties) never get a say."""
    handle = load("tiny-llama")

    def forbidden(*args, **kwargs):
        raise AssertionError("model.generate was called")

    monkeypatch.setattr(handle.model, "generate", forbidden)
    short = problem.__class__(**{**problem.to_dict(), "question": "2 + 3?", "id": "short"})
    for name in STRATEGIES.names():
        extra = {**TINY_OPTIONS.get(name, {}), **SHORT_OPTIONS.get(name, {})}
        run_one(handle, short if name in OWN_CONTRACT else problem, SMALL.replace(strategy=name, seed=99, extra=extra))
