"""The context rule for the disagreement batches (tiny pair, 256 positions): a problem whose prompt leaves no room
for max_new_tokens is skipped and named, in the rollout batch and in the sweep, the CLI
counts it on stderr, and a batch where nothing fits is refused. (The kept problems keep their seed offsets: their
place in the whole set, tests/disagreement/test_scoring.py.)"""
import json

import pytest

from backend.__main__ import main
from backend.disagreement.calibration import CalibrationConfig
from backend.disagreement.pair import load_pair
from backend.disagreement.rollout import ProblemSet, prompt_ids
from backend.disagreement.scoring import RolloutConfig, rollouts
from backend.disagreement.sweep import SweepConfig, sweep
from backend.errors import UserError
from backend.models import skipped_line

PROBLEMS = ProblemSet(n=3, split="heldout", seed=0)  # prompts of 174-209 tokens: few new tokens fit
CAL = CalibrationConfig(ProblemSet(n=2, split="train", seed=1, difficulty=1), max_new_tokens=8)


@pytest.fixture(scope="module")
def pair():
    return load_pair("tiny-llama", "tiny-qwen2")


def _split(pair):
    """max_new_tokens that the longest prompt(s) leave no room for, and the ids that are then skipped."""
    lengths = {p.id: prompt_ids(pair.base, p).shape[1] for p in PROBLEMS.problems()}
    assert len(set(lengths.values())) > 1
    new = 256 - sorted(set(lengths.values()))[-2]
    return new, tuple(i for i, n in lengths.items() if n + new > 256)


def test_rollouts_sweep_and_analysis_skip_name_and_count_what_does_not_fit(pair, fresh_store, capsys):
    new, too_long = _split(pair)
    batch = rollouts(pair, RolloutConfig(PROBLEMS, "base", max_new_tokens=new)).value  # the sweep's reference too
    assert batch.skipped == too_long and len(batch.rollouts) == 3 - len(too_long)
    assert [r.problem_id for r in batch.rollouts] == [p.id for p in PROBLEMS.problems() if p.id not in too_long]
    with pytest.raises(UserError, match="^No problem fits the model's context of 256 tokens with 250 new tokens"):
        rollouts(pair, RolloutConfig(PROBLEMS, "base", max_new_tokens=250))

    # the sweep (one store: its reference rollouts are the analysis's too)
    result = sweep(pair, SweepConfig(PROBLEMS, (0.3,), policies=("guided",), calibration=CAL,
                                     max_new_tokens=new)).value
    assert result.skipped == too_long and result.n_problems == 3 - len(too_long)
    assert not {r.problem_id for r in result.records} & set(too_long)
    assert main(["disagree", "analyze", "--base", "tiny-llama", "--reasoning", "tiny-qwen2", "--n", "3", "--split",
                 "heldout", "--seed", "0", "--max-new-tokens", str(new), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["skipped"] == list(too_long)
    assert skipped_line(too_long) in captured.err


def test_eopd_and_learnability_skip_and_count_too(pair, fresh_store):
    from backend.disagreement.eopd import EopdConfig, eopd
    from backend.disagreement.learnability import LearnabilityConfig, _solution_ids, learnability, training_problems

    new, too_long = _split(pair)
    result = eopd(pair, EopdConfig(PROBLEMS, max_new_tokens=new, temperature=0.0)).value
    assert result.skipped == too_long and len(result.problem_ids) == 3 - len(too_long)

    problems, _ = training_problems(pair, 4)
    lengths = {p.id: prompt_ids(pair.base, p).shape[1] for p in problems}
    new = 256 - sorted(lengths.values())[-2]
    expected = {p.id for p in problems if lengths[p.id] + new > 256 or _solution_ids(pair, p)[0].shape[1] > 256}
    assert 0 < len(expected) < 4
    out = learnability(pair, LearnabilityConfig(n=4, max_new_tokens=new, sketch_dim=0, layers=(1,))).value
    assert set(out.skipped) == expected and {r.problem_id for r in out.records} == {p.id for p in problems} - expected
