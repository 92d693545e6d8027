"""Every registered strategy end to end on a tiny model: one result type, caching, selection, registry."""
import numpy as np
import pytest

from backend.decoding import DecodeConfig, StrategySpec, decode, get_strategy, register, strategies
from backend.decoding.result import Outcome
from backend.decoding.select import agreement, choose
from backend.models import load
from backend.tasks.arithmetic import generate_problems

SMALL = DecodeConfig(max_new_tokens=6, n=3, block_size=3, mh_steps=1, alpha=2.0)


@pytest.fixture(scope="module")
def problem():
    return generate_problems(1, "heldout", seed=0)[0]


@pytest.mark.parametrize("name", ["greedy", "sampling", "low_temp", "best_of_n", "mh", "asmc"])
def test_strategy_runs_and_records(name, problem):
    handle = load("tiny-llama")
    r = decode(handle, problem, SMALL.replace(strategy=name)).value
    assert r.strategy == name and r.expected == problem.answer and isinstance(r.correct, bool)
    assert 1 <= len(r.token_ids) <= 6 and r.tokens_generated >= len(r.token_ids)
    assert r.forward_passes >= 1 and r.wall_seconds > 0
    assert (r.particles != ()) == (name == "asmc") and (r.mh is not None) == (name == "mh")
    if name in ("best_of_n", "asmc"):
        assert len(r.candidates) == 3 and abs(sum(c.weight for c in r.candidates) - 1) < 1e-6
    assert set(r.summary()) >= {"output", "correct", "tokens_generated", "forward_passes", "wall_seconds"}


def test_second_request_is_served_from_the_store_and_irrelevant_fields_share_it(problem):
    handle = load("tiny-llama")
    first = decode(handle, problem, DecodeConfig(strategy="greedy", max_new_tokens=4, alpha=2.0))
    again = decode(handle, problem, DecodeConfig(strategy="greedy", max_new_tokens=4, alpha=7.0, n=5))
    assert again.cached and again.key == first.key and again.value.output == first.value.output


def test_free_prompt_has_no_checker():
    r = decode(load("tiny-llama"), "Say hi", DecodeConfig(strategy="best_of_n", max_new_tokens=3, n=2)).value
    assert r.correct is None and r.answer is None and r.expected is None
    assert "by score" in r.notes[-1]


def test_adaptive_asmc_grows_within_the_budget(problem):
    cfg = DecodeConfig(strategy="asmc", max_new_tokens=5, n=2, adaptive=True, token_budget=40, max_particles=8)
    r = decode(load("tiny-llama"), problem, cfg).value
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


def test_a_new_strategy_plugs_in_with_one_registration(monkeypatch):
    from backend.decoding import registry

    monkeypatch.setattr(registry, "_registry", dict(strategies()))  # keep the global registry clean
    def run(ctx, config):
        roll = ctx.rollout(1, 1.0, config.max_new_tokens, greedy=True)
        return Outcome(tuple(roll.row(0)), roll.tokens_generated, roll.forward_passes, notes=(config.option("tag"),))

    register(StrategySpec("echo_test", "Echo", "test strategy", run, extra_defaults={"tag": "x"}))
    assert "echo_test" in strategies() and get_strategy("echo_test").label == "Echo"
    r = decode(load("tiny-llama"), "hi", DecodeConfig(strategy="echo_test", max_new_tokens=2, extra={"tag": "y"}))
    assert r.value.notes == ("y",) and r.value.config.extra == {"tag": "y"}


def test_no_strategy_calls_model_generate(monkeypatch, problem):
    """q must be exactly our own softmax: generation_config defaults (top-k, penalties) never get a say."""
    handle = load("tiny-llama")

    def forbidden(*args, **kwargs):
        raise AssertionError("model.generate was called")

    monkeypatch.setattr(handle.model, "generate", forbidden)
    for name in ("sampling", "low_temp", "best_of_n", "mh", "asmc"):
        decode(handle, problem, SMALL.replace(strategy=name, seed=99))
