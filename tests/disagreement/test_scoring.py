"""Rollout batches: each rollout is stored, so an interrupted batch resumes from the rollouts already made."""
import pytest

from backend.disagreement import scoring
from backend.disagreement.pair import load_pair
from backend.disagreement.rollout import ProblemSet
from backend.disagreement.scoring import RolloutConfig, rollouts


class Interrupted(Exception):
    pass


def test_an_interrupted_batch_resumes_from_its_stored_rollouts(monkeypatch):
    pair = load_pair("tiny-llama", "tiny-qwen2")
    config = RolloutConfig(ProblemSet(n=4, split="heldout", seed=3, difficulty=1), "base", max_new_tokens=6)
    generate = scoring.generate_one
    calls = []

    def dies_on_the_third(pair, problem, config, index=0):
        calls.append(index)
        if len(calls) == 3:
            raise Interrupted
        return generate(pair, problem, config, index)

    monkeypatch.setattr(scoring, "generate_one", dies_on_the_third)
    with pytest.raises(Interrupted):
        rollouts(pair, config)
    assert calls == [0, 1, 2]

    calls.clear()
    monkeypatch.setattr(scoring, "generate_one", lambda *a, **k: calls.append(a[3]) or generate(*a, **k))
    resumed = rollouts(pair, config)
    assert not resumed.cached and calls == [2, 3], "only the rollouts not stored before are generated"
    fresh = [generate(pair, r_problem, config, i) for i, r_problem in enumerate(config.problems.problems())]
    assert [r.token_ids for r in resumed.value.rollouts] == [r.token_ids for r in fresh]
    assert rollouts(pair, config).cached
